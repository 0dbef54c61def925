import type { OrderCancelledEvent, OrderPlacedEvent } from '../domain/events';
import type { OrderView } from '../domain/order';

/** An order as stored: the public view plus who placed it and what they sent. */
export interface StoredOrder extends OrderView {
  caller: string;
  /** Fingerprint of the request that created it; tells a genuine retry from key reuse. */
  fingerprint: string;
}

export type PlaceResult = { kind: 'created' } | { kind: 'exists'; order: StoredOrder };

export type CancelResult =
  { kind: 'cancelled'; order: StoredOrder } | { kind: 'not-cancellable'; order: StoredOrder | undefined };

/**
 * Orders and their outbox. Each write is one transaction: the state change and
 * the event describing it land together or not at all.
 */
export interface OrderRepository {
  /**
   * Writes the order (only if absent), its OrderPlaced outbox item, and the
   * record that its caller placed an order for its customer (see hasPlacedFor).
   */
  place(order: StoredOrder, event: OrderPlacedEvent): Promise<PlaceResult>;
  /** PLACED -> CANCELLED (only from PLACED) plus the OrderCancelled outbox item. */
  cancel(order: StoredOrder, cancelledAt: string, event: OrderCancelledEvent): Promise<CancelResult>;
  get(orderId: string): Promise<StoredOrder | undefined>;
  /**
   * Whether `caller` ever placed an order for `customerId` (cancelled or not),
   * read consistently: what makes the customer's data the caller's to read.
   */
  hasPlacedFor(caller: string, customerId: string): Promise<boolean>;
}
