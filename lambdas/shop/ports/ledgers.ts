import type { OrderCancelledEvent, OrderPlacedEvent } from '../domain/events';
import type { LedgerResult, ProviderCallRecord, RecordWork } from '@exactly-once/runtime';

/** Stock reservations, applied per order in version order (FIFO consumer). */
export interface FulfilmentLedger extends ProviderCallRecord {
  /** Inbox claim + fulfilment state 0 -> 1 (RESERVED) + `reserved += qty` per SKU, in one transaction. */
  reserve(event: OrderPlacedEvent, work?: RecordWork): Promise<LedgerResult>;
  /**
   * Inbox claim + state 1 -> 2 (RELEASED) + `reserved -= qty` + the OrderPlaced
   * inbox entry marked superseded, or 0 -> 2 when nothing was reserved yet.
   */
  release(event: OrderCancelledEvent, work?: RecordWork): Promise<LedgerResult>;
}

/** Loyalty points (standard-queue consumer). Nothing supersedes a credit: points are not taken back. */
export interface LoyaltyLedger extends ProviderCallRecord {
  /** Inbox claim + `points += n` on the customer, in one transaction. */
  credit(event: OrderPlacedEvent, points: number, work?: RecordWork): Promise<LedgerResult>;
}

/** Read models for the API. */
export interface EffectsReader {
  /** The points `caller` earned for its customer `customerId` (the tenant-scoped item). */
  customerPoints(caller: string, customerId: string): Promise<number | undefined>;
  reservedStock(sku: string): Promise<number | undefined>;
}
