/**
 * Layout of the Orders table (single table: orders, their outbox, and which
 * caller may read which customer).
 *
 *   pk = ORDER#<orderId>, sk = ORDER             the order
 *   pk = ORDER#<orderId>, sk = OUTBOX#<eventId>  an outbox item, written in the same transaction
 *   pk = CALLER#<caller>#CUSTOMER#<customerId>,  the caller placed this order for the customer, so may
 *   sk = ORDER#<orderId>                         read it (GET /customers/{id}); same transaction too
 *
 * The customer access item is one per order, not one per (caller, customer):
 * concurrent orders of one caller for one customer would otherwise put the same
 * item in two transactions at once, and DynamoDB cancels one of them
 * (TransactionConflict, a 503). A read asks whether the partition holds any.
 * The key is unambiguous because a customer id is an identifier (no `#`):
 * everything after the last `#` is the customer, everything between `CALLER#`
 * and `#CUSTOMER#<customerId>` the caller.
 *
 * Outbox items carry `pendingShard` + `createdAt` until dispatched: a sparse
 * index on them lets the sweeper find what the stream never relayed. The shard
 * spreads that index over several partitions so it never becomes a hot key.
 */
export const ORDER_SK = 'ORDER';
export const OUTBOX_SK_PREFIX = 'OUTBOX#';
export const ENTITY_ORDER = 'ORDER';
export const ENTITY_OUTBOX = 'OUTBOX';
export const ENTITY_CUSTOMER_ACCESS = 'CUSTOMER_ACCESS';
/** Every customer access item's partition key starts with it (the read function's IAM grant is limited to it). */
export const CUSTOMER_ACCESS_PK_PREFIX = 'CALLER#';
export const PENDING_OUTBOX_INDEX = 'pendingOutbox';
export const PENDING_SHARDS = 8;

export function orderPk(orderId: string): string {
  return `ORDER#${orderId}`;
}

export function outboxSk(eventId: string): string {
  return `${OUTBOX_SK_PREFIX}${eventId}`;
}

/** The partition of a caller's access to a customer: one item per order the caller placed for it. */
export function customerAccessPk(caller: string, customerId: string): string {
  return `${CUSTOMER_ACCESS_PK_PREFIX}${caller}#CUSTOMER#${customerId}`;
}

export function customerAccessKey(order: { caller: string; customerId: string; orderId: string }): {
  pk: string;
  sk: string;
} {
  return { pk: customerAccessPk(order.caller, order.customerId), sk: orderPk(order.orderId) };
}

/**
 * Where an event's outbox item lives: in its entity's partition (the order's),
 * so it is written in the same transaction as the entity's change.
 */
export function outboxKey(event: { entityId: string; eventId: string }): { pk: string; sk: string } {
  return { pk: orderPk(event.entityId), sk: outboxSk(event.eventId) };
}

/** Stable shard for an event id, so a retried write lands on the same shard. */
export function pendingShardOf(eventId: string): string {
  let hash = 0;
  for (let i = 0; i < eventId.length; i++) hash = (hash * 31 + eventId.charCodeAt(i)) >>> 0;
  return String(hash % PENDING_SHARDS);
}
