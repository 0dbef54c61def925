import { z } from 'zod';
import { envelopeSchema, parseJsonBody, parseWith } from '@exactly-once/runtime';
import { orderCancelledEventId, orderLineSchema, orderPlacedEventId, type OrderLine } from './order';

/**
 * The orders domain's integration events, written to the outbox in the same
 * transaction as the state change they describe. Each is an envelope
 * (packages/runtime/src/envelope.ts) whose entity is the order (`entityId` =
 * orderId: the FIFO group) and whose payload is the domain's own fields.
 * `version` orders the events of one order: placed = 1, cancelled = 2.
 * The schemas are the single definition: the types are inferred from them.
 */
const orderPlacedSchema = envelopeSchema.extend({
  type: z.literal('OrderPlaced'),
  version: z.literal(1),
  payload: z.object({
    customerId: z.string().min(1),
    items: z.array(orderLineSchema).min(1),
    totalCents: z.int().min(0),
  }),
});

const orderCancelledSchema = envelopeSchema.extend({
  type: z.literal('OrderCancelled'),
  version: z.literal(2),
  payload: z.object({
    customerId: z.string().min(1),
    items: z.array(orderLineSchema).min(1),
  }),
});

const orderEventSchema = z.discriminatedUnion('type', [orderPlacedSchema, orderCancelledSchema]);

/** Every event type the orders domain writes to the outbox; a consumer may take only these. */
export const ORDER_EVENT_TYPES = ['OrderPlaced', 'OrderCancelled'] as const;

/** EventEnvelope<'OrderPlaced', { customerId, items, totalCents }>, version 1. */
export type OrderPlacedEvent = z.infer<typeof orderPlacedSchema>;
/** EventEnvelope<'OrderCancelled', { customerId, items }>, version 2. */
export type OrderCancelledEvent = z.infer<typeof orderCancelledSchema>;
export type OrderEvent = OrderPlacedEvent | OrderCancelledEvent;

/** What an event needs of its order; `caller`, the principal the API authenticated, is the event's verified tenant. */
type OrderFacts = { orderId: string; customerId: string; items: OrderLine[]; caller?: string };

const tenantOf = (order: OrderFacts) => (order.caller === undefined ? {} : { tenant: order.caller });

/** The OrderPlaced event of an order: its id is deterministic, so a retried write cannot mint a second one. */
export function orderPlacedEvent(order: OrderFacts & { totalCents: number }, occurredAt: string): OrderPlacedEvent {
  const { orderId, customerId, items, totalCents } = order;
  return {
    eventId: orderPlacedEventId(orderId),
    type: 'OrderPlaced',
    entityId: orderId,
    version: 1,
    occurredAt,
    ...tenantOf(order),
    payload: { customerId, items, totalCents },
  };
}

/** The OrderCancelled event of an order; it carries the items so fulfilment can release them without a read. */
export function orderCancelledEvent(order: OrderFacts, occurredAt: string): OrderCancelledEvent {
  const { orderId, customerId, items } = order;
  return {
    eventId: orderCancelledEventId(orderId),
    type: 'OrderCancelled',
    entityId: orderId,
    version: 2,
    occurredAt,
    ...tenantOf(order),
    payload: { customerId, items },
  };
}

/**
 * Parses a message body into an order event. A body that is not one of our
 * events can never succeed however often it is retried: that is a PermanentError.
 */
export function parseOrderEvent(body: string): OrderEvent {
  return parseWith(orderEventSchema, parseJsonBody(body), 'an order event');
}
