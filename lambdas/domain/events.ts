import { z } from 'zod';
import { PermanentError } from './errors';
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

const lineSchema = z.object({
  sku: z.string().min(1),
  quantity: z.int().min(1),
  unitPriceCents: z.int().min(0),
});

const orderPlacedSchema = z.object({
  eventId: z.string().min(1),
  eventType: z.literal('OrderPlaced'),
  version: z.literal(1),
  orderId: z.string().min(1),
  customerId: z.string().min(1),
  items: z.array(lineSchema).min(1),
  totalCents: z.int().min(0),
  occurredAt: z.string(),
});

const orderCancelledSchema = z.object({
  eventId: z.string().min(1),
  eventType: z.literal('OrderCancelled'),
  version: z.literal(2),
  orderId: z.string().min(1),
  customerId: z.string().min(1),
  items: z.array(lineSchema).min(1),
  occurredAt: z.string(),
});

const orderEventSchema = z.discriminatedUnion('eventType', [orderPlacedSchema, orderCancelledSchema]);

/**
 * Parses a message body into an event. A body that is not one of our events
 * can never succeed however often it is retried: that is a PermanentError.
 */
export function parseOrderEvent(body: string): OrderEvent {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new PermanentError('SchemaViolation', 'Message body is not JSON');
  }
  const parsed = orderEventSchema.safeParse(json);
  if (!parsed.success) {
    const where = parsed.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; ');
    throw new PermanentError('SchemaViolation', `Message body is not an order event: ${where}`);
  }
  return parsed.data as OrderEvent;
}
