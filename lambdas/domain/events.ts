import { z } from 'zod';
import { PermanentError } from './errors';
import { orderCancelledEventId, orderLineSchema, orderPlacedEventId, type OrderLine } from './order';

/**
 * Integration events written to the outbox in the same transaction as the
 * state change they describe. `eventId` is assigned by the producer and is the
 * only dedupe key consumers trust (an SQS messageId changes on every resend).
 * `version` orders the events of one order: placed = 1, cancelled = 2.
 * The schemas are the single definition: the types are inferred from them.
 */
const eventBase = z.object({
  eventId: z.string().min(1),
  orderId: z.string().min(1),
  customerId: z.string().min(1),
  items: z.array(orderLineSchema).min(1),
  occurredAt: z.string(),
});

const orderPlacedSchema = eventBase.extend({
  eventType: z.literal('OrderPlaced'),
  version: z.literal(1),
  totalCents: z.int().min(0),
});

const orderCancelledSchema = eventBase.extend({
  eventType: z.literal('OrderCancelled'),
  version: z.literal(2),
});

const orderEventSchema = z.discriminatedUnion('eventType', [orderPlacedSchema, orderCancelledSchema]);

/** Every event type the orders domain writes to the outbox; a consumer may take only these. */
export const ORDER_EVENT_TYPES = ['OrderPlaced', 'OrderCancelled'] as const;

export type OrderPlacedEvent = z.infer<typeof orderPlacedSchema>;
export type OrderCancelledEvent = z.infer<typeof orderCancelledSchema>;
export type OrderEvent = OrderPlacedEvent | OrderCancelledEvent;

type OrderFacts = { orderId: string; customerId: string; items: OrderLine[] };

/** The OrderPlaced event of an order: its id is deterministic, so a retried write cannot mint a second one. */
export function orderPlacedEvent(order: OrderFacts & { totalCents: number }, occurredAt: string): OrderPlacedEvent {
  const { orderId, customerId, items, totalCents } = order;
  return {
    eventId: orderPlacedEventId(orderId),
    eventType: 'OrderPlaced',
    version: 1,
    orderId,
    customerId,
    items,
    totalCents,
    occurredAt,
  };
}

/** The OrderCancelled event of an order; it carries the items so fulfilment can release them without a read. */
export function orderCancelledEvent(order: OrderFacts, occurredAt: string): OrderCancelledEvent {
  const { orderId, customerId, items } = order;
  return {
    eventId: orderCancelledEventId(orderId),
    eventType: 'OrderCancelled',
    version: 2,
    orderId,
    customerId,
    items,
    occurredAt,
  };
}

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
  return parsed.data;
}
