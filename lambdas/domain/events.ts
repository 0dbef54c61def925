import type { OrderLine } from './order';

/**
 * Integration events written to the outbox in the same transaction as the
 * state change they describe. `eventId` is assigned by the producer and is the
 * only dedupe key consumers trust (an SQS messageId changes on every resend).
 * `version` orders the events of one order: placed = 1, cancelled = 2.
 */
export interface OrderPlacedEvent {
  eventId: string;
  eventType: 'OrderPlaced';
  version: 1;
  orderId: string;
  customerId: string;
  items: OrderLine[];
  totalCents: number;
  occurredAt: string;
}

export interface OrderCancelledEvent {
  eventId: string;
  eventType: 'OrderCancelled';
  version: 2;
  orderId: string;
  customerId: string;
  items: OrderLine[];
  occurredAt: string;
}

export type OrderEvent = OrderPlacedEvent | OrderCancelledEvent;
