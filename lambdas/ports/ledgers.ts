import type { OrderCancelledEvent, OrderPlacedEvent } from '../domain/events';

/**
 * What applying an event did:
 * - applied: the inbox claim and the effect committed together, just now;
 * - duplicate: the inbox already held this consumer's claim on the eventId, so
 *   the effect happened before (the only outcome that means "already done");
 * - stale: a newer event for the same order was applied first; nothing to do.
 */
export type ApplyOutcome = 'applied' | 'duplicate' | 'stale';

/** Stock reservations, applied per order in version order (FIFO consumer). */
export interface FulfilmentLedger {
  /** Inbox claim + fulfilment state 0 -> 1 (RESERVED) + `reserved += qty` per SKU, in one transaction. */
  reserve(event: OrderPlacedEvent): Promise<ApplyOutcome>;
  /** Inbox claim + state 1 -> 2 (RELEASED) + `reserved -= qty`, or 0 -> 2 when nothing was reserved yet. */
  release(event: OrderCancelledEvent): Promise<ApplyOutcome>;
}

/** Loyalty points (standard-queue consumer). */
export interface LoyaltyLedger {
  /** Inbox claim + `points += n` on the customer, in one transaction. */
  credit(event: OrderPlacedEvent, points: number): Promise<ApplyOutcome>;
}

/** Read models for the API. */
export interface EffectsReader {
  customerPoints(customerId: string): Promise<number | undefined>;
  reservedStock(sku: string): Promise<number | undefined>;
}
