import {
  BatchGetCommand,
  type BatchGetCommandOutput,
  QueryCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import type { OrderEvent } from '../domain/events';
import type { OutboxStore, PendingOutboxItem } from '../ports/outbox';
import { orderPk, outboxSk, PENDING_OUTBOX_INDEX, PENDING_SHARDS } from './order-table';

/** A pending item as the index lists it, with its base-table key. */
type IndexedItem = PendingOutboxItem & { key: { pk: string; sk: string } };

/** BatchGetItem takes at most 100 keys a call. */
const BATCH_GET_LIMIT = 100;
/** Rounds of UnprocessedKeys before the sweep gives up (and retries on its next run). */
const BATCH_GET_ROUNDS = 5;
/** Index heads read per shard to find the oldest item that is really still pending. */
const HEADS_PER_SHARD = 10;

export class DynamoDbOutboxStore implements OutboxStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async markDispatched(event: OrderEvent, at: Date): Promise<boolean> {
    // A MODIFY in the stream: the relay's filter only admits INSERTs, so this does not re-trigger it.
    const { Attributes } = await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: orderPk(event.orderId), sk: outboxSk(event.eventId) },
        UpdateExpression: 'SET dispatchedAt = if_not_exists(dispatchedAt, :at) REMOVE pendingShard',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':at': at.toISOString() },
        ReturnValues: 'UPDATED_OLD',
      }),
    );
    return Attributes?.dispatchedAt === undefined;
  }

  /**
   * Pending items older than `olderThan`, oldest first. The pending index is a GSI, so
   * eventually consistent: it can still list an item the relay has just marked
   * dispatched. Each candidate is re-read from the base table (consistently) and
   * dropped if dispatched, so a lagging index neither republishes an item nor
   * makes it count as the oldest pending one (which would raise the outbox-age alarm).
   */
  async pendingOlderThan(olderThan: Date, limit: number): Promise<PendingOutboxItem[]> {
    const perShard = await Promise.all(
      this.shards().map((shard) => this.queryShard(shard, { before: olderThan.toISOString(), limit })),
    );
    const candidates = perShard
      .flat()
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
      .slice(0, limit);
    return this.stillPending(candidates);
  }

  async oldestPendingCreatedAt(): Promise<string | undefined> {
    const heads = await Promise.all(
      this.shards().map(async (shard) => {
        // A few heads per shard: the first ones may be dispatched items the index has not dropped yet.
        const pending = await this.stillPending(await this.queryShard(shard, { limit: HEADS_PER_SHARD }));
        return pending[0]?.createdAt;
      }),
    );
    return heads.filter((h): h is string => h !== undefined).sort()[0];
  }

  /** The candidates whose base item exists and is not dispatched, read with strong consistency. */
  private async stillPending(candidates: IndexedItem[]): Promise<IndexedItem[]> {
    if (candidates.length === 0) return [];
    const dispatchedOrGone = new Set(candidates.map((c) => c.itemKey));
    for (let start = 0; start < candidates.length; start += BATCH_GET_LIMIT) {
      let keys: Record<string, unknown>[] | undefined = candidates
        .slice(start, start + BATCH_GET_LIMIT)
        .map((c) => ({ pk: c.key.pk, sk: c.key.sk }));
      for (let round = 0; keys !== undefined && keys.length > 0; round++) {
        if (round === BATCH_GET_ROUNDS) throw new Error('BatchGetItem left keys unprocessed; the sweep will retry');
        const answer: BatchGetCommandOutput = await this.client.send(
          new BatchGetCommand({
            RequestItems: {
              [this.tableName]: { Keys: keys, ConsistentRead: true, ProjectionExpression: 'pk, sk, dispatchedAt' },
            },
          }),
        );
        for (const item of answer.Responses?.[this.tableName] ?? [])
          if (item.dispatchedAt === undefined) dispatchedOrGone.delete(`${String(item.pk)}/${String(item.sk)}`);
        keys = answer.UnprocessedKeys?.[this.tableName]?.Keys;
      }
    }
    return candidates.filter((c) => !dispatchedOrGone.has(c.itemKey));
  }

  private shards(): string[] {
    return Array.from({ length: PENDING_SHARDS }, (_, i) => String(i));
  }

  private async queryShard(shard: string, options: { before?: string; limit: number }): Promise<IndexedItem[]> {
    const { Items } = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: PENDING_OUTBOX_INDEX,
        KeyConditionExpression:
          options.before === undefined ? 'pendingShard = :s' : 'pendingShard = :s AND createdAt < :before',
        ExpressionAttributeValues: {
          ':s': shard,
          ...(options.before === undefined ? {} : { ':before': options.before }),
        },
        Limit: options.limit,
        ScanIndexForward: true,
      }),
    );
    return (Items ?? []).map((item) => ({
      key: { pk: String(item.pk), sk: String(item.sk) },
      itemKey: `${String(item.pk)}/${String(item.sk)}`,
      event: item.event,
      createdAt: String(item.createdAt),
    }));
  }
}
