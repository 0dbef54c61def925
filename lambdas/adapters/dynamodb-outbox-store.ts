import {
  BatchGetCommand,
  type BatchGetCommandOutput,
  QueryCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import type { EventEnvelope } from '../messaging/envelope';
import type { OutboxStore, PendingOutboxItem } from '../ports/outbox';
import { outboxKey, PENDING_OUTBOX_INDEX, PENDING_SHARDS } from './order-table';

/** A pending item as the index lists it, with its base-table key. */
type IndexedItem = PendingOutboxItem & { key: { pk: string; sk: string } };

/** An item's `<pk>/<sk>`, as PendingOutboxItem.itemKey names it. */
const itemKeyOf = (item: Record<string, unknown>): string => `${String(item.pk)}/${String(item.sk)}`;

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

  async markDispatched(event: EventEnvelope, at: Date): Promise<boolean> {
    // A MODIFY in the stream: the relay's filter only admits INSERTs, so this does not re-trigger it.
    const { Attributes } = await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: outboxKey(event),
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
    const pending = new Set<string>();
    for (let start = 0; start < candidates.length; start += BATCH_GET_LIMIT) {
      const items = await this.batchGet(candidates.slice(start, start + BATCH_GET_LIMIT).map((c) => c.key));
      for (const item of items) if (item.dispatchedAt === undefined) pending.add(itemKeyOf(item));
    }
    return candidates.filter((c) => pending.has(c.itemKey));
  }

  /** The items of `keys` that exist (key and `dispatchedAt` only), following UnprocessedKeys a few rounds. */
  private async batchGet(keys: Record<string, unknown>[]): Promise<Record<string, unknown>[]> {
    const items: Record<string, unknown>[] = [];
    for (let round = 0; keys.length > 0; round++) {
      if (round === BATCH_GET_ROUNDS) throw new Error('BatchGetItem left keys unprocessed; the sweep will retry');
      const answer: BatchGetCommandOutput = await this.client.send(
        new BatchGetCommand({
          RequestItems: {
            [this.tableName]: { Keys: keys, ConsistentRead: true, ProjectionExpression: 'pk, sk, dispatchedAt' },
          },
        }),
      );
      items.push(...(answer.Responses?.[this.tableName] ?? []));
      keys = answer.UnprocessedKeys?.[this.tableName]?.Keys ?? [];
    }
    return items;
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
      itemKey: itemKeyOf(item),
      event: item.event,
      createdAt: String(item.createdAt),
    }));
  }
}
