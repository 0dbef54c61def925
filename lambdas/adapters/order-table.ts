/**
 * Layout of the Orders table (single table: orders and their outbox).
 *
 *   pk = ORDER#<orderId>, sk = ORDER             the order
 *   pk = ORDER#<orderId>, sk = OUTBOX#<eventId>  an outbox item, written in the same transaction
 *
 * Outbox items carry `pendingShard` + `createdAt` until dispatched: a sparse
 * index on them lets the sweeper find what the stream never relayed. The shard
 * spreads that index over several partitions so it never becomes a hot key.
 */
export const ORDER_SK = 'ORDER';
export const OUTBOX_SK_PREFIX = 'OUTBOX#';
export const ENTITY_ORDER = 'ORDER';
export const ENTITY_OUTBOX = 'OUTBOX';
export const PENDING_OUTBOX_INDEX = 'pendingOutbox';
export const PENDING_SHARDS = 8;

export function orderPk(orderId: string): string {
  return `ORDER#${orderId}`;
}

export function outboxSk(eventId: string): string {
  return `${OUTBOX_SK_PREFIX}${eventId}`;
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
