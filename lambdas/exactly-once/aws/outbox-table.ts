/**
 * The mechanism's outbox items, in the application's table beside the entities they belong to:
 *
 *   pk = <entity partition>, sk = OUTBOX#<eventId>   an outbox item, written in the same transaction
 *                                                    as the entity's change (`entity` = OUTBOX, `event`)
 *
 * The entity's partition is `<prefix><entityId>`: the application picks the prefix (the stack passes
 * it to the relay and the sweeper), so the item shares a partition with the entity it was written with.
 *
 * Outbox items carry `pendingShard` + `createdAt` until dispatched: a sparse index on them lets the
 * sweeper find what the stream never relayed. The shard spreads that index over several partitions so
 * it never becomes a hot key.
 */
export const OUTBOX_SK_PREFIX = 'OUTBOX#';
/** The `entity` attribute of an outbox item: the relay's stream filter admits only these INSERTs. */
export const ENTITY_OUTBOX = 'OUTBOX';
export const PENDING_OUTBOX_INDEX = 'pendingOutbox';
export const PENDING_SHARDS = 8;

export function outboxSk(eventId: string): string {
  return `${OUTBOX_SK_PREFIX}${eventId}`;
}

/** Where an event's outbox item lives: in its entity's partition, so it commits with the entity's change. */
export function outboxItemKey(
  event: { entityId: string; eventId: string },
  entityPartitionPrefix: string,
): { pk: string; sk: string } {
  return { pk: `${entityPartitionPrefix}${event.entityId}`, sk: outboxSk(event.eventId) };
}

/** Stable shard for an event id, so a retried write lands on the same shard. */
export function pendingShardOf(eventId: string): string {
  let hash = 0;
  for (let i = 0; i < eventId.length; i++) hash = (hash * 31 + eventId.charCodeAt(i)) >>> 0;
  return String(hash % PENDING_SHARDS);
}
