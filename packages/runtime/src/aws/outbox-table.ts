import type { EventEnvelope } from '../envelope';
import { activeTraceparent } from '../trace/spans';
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
/**
 * The `entity` attribute of an outbox item: the relay's stream filter admits only these INSERTs.
 *
 * @example Telling an outbox item from the entity it sits beside (the DLQ tool, the proof kit)
 * ```ts
 * const outboxItems = items.filter((item) => item.entity === ENTITY_OUTBOX);
 * ```
 */
export const ENTITY_OUTBOX = 'OUTBOX';
/**
 * The name of the sparse index (partition key `pendingShard`, sort key `createdAt`) through which the
 * sweeper finds outbox items the stream never relayed. The application's table must have it under
 * this name, or the sweeper's query fails and an item the relay missed is never published.
 *
 * @example The neutral probe stack's table (test/exactly-once/fixtures/probe-stack.ts)
 * ```ts
 * this.thingsTable.addGlobalSecondaryIndex({
 *   indexName: PENDING_OUTBOX_INDEX,
 *   partitionKey: { name: 'pendingShard', type: dynamodb.AttributeType.STRING },
 *   sortKey: { name: 'createdAt', type: dynamodb.AttributeType.STRING },
 *   projectionType: dynamodb.ProjectionType.ALL,
 * });
 * ```
 */
export const PENDING_OUTBOX_INDEX = 'pendingOutbox';

/**
 * The TTL attribute of a dispatched outbox item (epoch seconds): set when the item is marked dispatched,
 * `dispatchedRetentionSeconds` later. Only dispatched outbox items carry it, never the entities beside
 * them. The application's table must use it as its TTL attribute, or dispatched items are kept forever
 * (the OutboxRetention synth rule checks it).
 *
 * @example The neutral probe stack's table (test/exactly-once/fixtures/probe-stack.ts)
 * ```ts
 * this.thingsTable = new dynamodb.Table(this, 'Things', {
 *   partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
 *   sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
 *   stream: dynamodb.StreamViewType.NEW_IMAGE,
 *   timeToLiveAttribute: OUTBOX_TTL_ATTRIBUTE,
 * });
 * ```
 */
export const OUTBOX_TTL_ATTRIBUTE = 'dispatchedExpiresAt';

/**
 * How long a dispatched outbox item is kept: 7 days. Nothing needs it after a day (the stream keeps a
 * record 24 h, and a redelivered INSERT marks its item dispatched again); the rest is for a person
 * looking at what was published. The OutboxRetention synth rule refuses less than the stream's 24 h.
 */
export const DEFAULT_DISPATCHED_RETENTION_SECONDS = 7 * 86_400;

/** How long a DynamoDB stream keeps a record: a dispatched item must outlive it. */
export const STREAM_RETENTION_SECONDS = 86_400;
export const PENDING_SHARDS = 8;

export function outboxSk(eventId: string): string {
  return `${OUTBOX_SK_PREFIX}${eventId}`;
}

/**
 * Where an event's outbox item lives: in its entity's partition, so it commits with the entity's change.
 * The prefix must be the one the stack gives OutboxRelay as `entityPartitionPrefix`.
 *
 * @example An orders application's outbox items, in each order's partition
 * ```ts
 * import { outboxItemKey } from '.';
 *
 * export function outboxKey(event: { entityId: string; eventId: string }): { pk: string; sk: string } {
 *   return outboxItemKey(event, ORDER_PK_PREFIX); // { pk: 'ORDER#<orderId>', sk: 'OUTBOX#<eventId>' }
 * }
 * ```
 */
export function outboxItemKey(
  event: { entityId: string; eventId: string },
  entityPartitionPrefix: string,
): { pk: string; sk: string } {
  return { pk: `${entityPartitionPrefix}${event.entityId}`, sk: outboxSk(event.eventId) };
}

/**
 * Stable shard for an event id, so a retried write lands on the same shard.
 *
 * @example The outbox item's sparse-index key, as `outboxPut` sets it
 * ```ts
 * pendingShard: pendingShardOf(event.eventId), // removed once the relay has published the event
 * ```
 */
export function pendingShardOf(eventId: string): string {
  let hash = 0;
  for (let i = 0; i < eventId.length; i++) hash = (hash * 31 + eventId.charCodeAt(i)) >>> 0;
  return String(hash % PENDING_SHARDS);
}

/**
 * The write of one event to the outbox, for the transaction that changes its entity: the item the
 * relay and the sweeper read (its key in the entity's partition, the envelope, the sparse-index key
 * the sweeper finds it by until the relay has published it). Conditional: event ids are
 * deterministic, so a second write of the same event is refused (the transaction fails), never a
 * second event. The stored envelope carries the active span's `traceparent` (packages/runtime/src/trace)
 * unless the event has its own: run the transaction in an `outbox-write` span (`inChildSpan`) and the
 * relay's span becomes its child.
 *
 * @example A booking and its event, in one transaction
 * ```ts
 * await documents.send(
 *   new TransactWriteCommand({
 *     TransactItems: [
 *       { Put: { TableName: table, Item: bookingItem, ConditionExpression: 'attribute_not_exists(pk)' } },
 *       outboxPut(table, bookingConfirmedEvent(booking), 'BOOKING#'),
 *     ],
 *   }),
 * );
 * ```
 */
export function outboxPut(
  tableName: string,
  event: EventEnvelope,
  entityPartitionPrefix: string,
): { Put: { TableName: string; Item: Record<string, unknown>; ConditionExpression: string } } {
  // The trace the write happens in (the outbox-write span, under the API's) travels with the event.
  const traceparent = event.traceparent ?? activeTraceparent();
  return {
    Put: {
      TableName: tableName,
      Item: {
        ...outboxItemKey(event, entityPartitionPrefix),
        entity: ENTITY_OUTBOX,
        eventId: event.eventId,
        type: event.type,
        entityId: event.entityId,
        event: traceparent === undefined ? event : { ...event, traceparent },
        createdAt: event.occurredAt,
        pendingShard: pendingShardOf(event.eventId),
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
}
