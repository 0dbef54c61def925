import {
  BatchGetCommand,
  type BatchGetCommandOutput,
  QueryCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import type { EventEnvelope } from '../envelope';
import type { OutboxStore, PendingOutboxItem } from '../outbox/ports';
import { OUTBOX_TTL_ATTRIBUTE, outboxItemKey, PENDING_OUTBOX_INDEX, PENDING_SHARDS } from './outbox-table';
import { expiresAfter } from './inbox-table';

/** A pending item as the index lists it, with the index partition it was listed in. */
type IndexedItem = PendingOutboxItem & { shard: string };

/**
 * The pending index's partition for items the sweeper set aside as
 * unpublishable (`pendingShard` = this instead of a shard number). No shard
 * query reads it, so however many there are, they never take a place among
 * the oldest pending items; they are still undispatched and still in the
 * index, where the sweeper re-checks them every run (a repaired one is
 * published) and counts them in the age of the oldest undispatched item.
 */
export const SET_ASIDE_PARTITION = 'malformed';

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
    /** The entities' partition-key prefix: an event's outbox item is under `<prefix><entityId>`. */
    private readonly entityPartitionPrefix: string,
    /**
     * How long a dispatched item is kept: its TTL (OUTBOX_TTL_ATTRIBUTE) is set this long after its
     * first dispatch. Undefined: kept forever.
     */
    private readonly dispatchedRetentionSeconds?: number,
  ) {}

  async markDispatched(event: EventEnvelope, at: Date): Promise<boolean> {
    const expires = this.dispatchedRetentionSeconds;
    // A MODIFY in the stream: the relay's filter only admits INSERTs, so this does not re-trigger it.
    // Both stamps are the first dispatch's: a second mark (a redelivered record) moves neither.
    const { Attributes } = await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: outboxItemKey(event, this.entityPartitionPrefix),
        UpdateExpression:
          expires === undefined
            ? 'SET dispatchedAt = if_not_exists(dispatchedAt, :at) REMOVE pendingShard'
            : 'SET dispatchedAt = if_not_exists(dispatchedAt, :at), #ttl = if_not_exists(#ttl, :expires) REMOVE pendingShard',
        ConditionExpression: 'attribute_exists(pk)',
        ...(expires === undefined ? {} : { ExpressionAttributeNames: { '#ttl': OUTBOX_TTL_ATTRIBUTE } }),
        ExpressionAttributeValues: {
          ':at': at.toISOString(),
          ...(expires === undefined ? {} : { ':expires': expiresAfter(at, expires) }),
        },
        ReturnValues: 'UPDATED_OLD',
      }),
    );
    return Attributes?.dispatchedAt === undefined;
  }

  /**
   * Pending items older than `olderThan`, oldest first. The pending index is a GSI, so
   * eventually consistent: it can still list an item the relay has just marked
   * dispatched (or the sweeper has just set aside). Each candidate is re-read from the
   * base table (consistently) and dropped unless it is still undispatched in the
   * partition it was listed in, so a lagging index neither republishes an item nor
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

  /**
   * Moves the item to the set-aside partition, keeping it undispatched, and notes why and when
   * (`malformedReason`, `malformedAt`) for whoever repairs it. Only if it is still pending in a
   * shard: a dispatched, deleted or already set-aside item is left alone. The update is a MODIFY
   * in the stream, which the relay's filter (INSERTs only) does not let in.
   */
  async setAside(item: PendingOutboxItem, reason: string, at: Date): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: item.key,
          UpdateExpression: 'SET pendingShard = :aside, malformedAt = :at, malformedReason = :reason',
          // `<>` is false on a missing attribute: a dispatched item (no pendingShard) is not matched.
          ConditionExpression: 'pendingShard <> :aside AND attribute_not_exists(dispatchedAt)',
          ExpressionAttributeValues: { ':aside': SET_ASIDE_PARTITION, ':at': at.toISOString(), ':reason': reason },
        }),
      );
      return true;
    } catch (error) {
      if ((error as Error).name === 'ConditionalCheckFailedException') return false;
      throw error;
    }
  }

  async setAsideItems(limit: number): Promise<PendingOutboxItem[]> {
    return this.stillPending(await this.queryShard(SET_ASIDE_PARTITION, { limit }));
  }

  async oldestPendingCreatedAt(): Promise<string | undefined> {
    const heads = await Promise.all(
      [...this.shards(), SET_ASIDE_PARTITION].map(async (shard) => {
        // A few heads per shard: the first ones may be dispatched items the index has not dropped yet.
        const pending = await this.stillPending(await this.queryShard(shard, { limit: HEADS_PER_SHARD }));
        return pending[0]?.createdAt;
      }),
    );
    return heads.filter((h): h is string => h !== undefined).sort()[0];
  }

  /**
   * The candidates whose base item exists, is not dispatched and is still in the partition the
   * index listed it in, read with strong consistency. Returned as the port's items (no partition).
   */
  private async stillPending(candidates: IndexedItem[]): Promise<PendingOutboxItem[]> {
    const partitionOf = new Map<string, unknown>();
    for (let start = 0; start < candidates.length; start += BATCH_GET_LIMIT) {
      const items = await this.batchGet(candidates.slice(start, start + BATCH_GET_LIMIT).map((c) => c.key));
      for (const item of items)
        if (item.dispatchedAt === undefined) partitionOf.set(itemKeyOf(item), item.pendingShard);
    }
    return candidates
      .filter((c) => partitionOf.get(c.itemKey) === c.shard)
      .map(({ itemKey, key, event, createdAt }) => ({ itemKey, key, event, createdAt }));
  }

  /** The items of `keys` that exist (key, `dispatchedAt`, `pendingShard` only), following UnprocessedKeys a few rounds. */
  private async batchGet(keys: Record<string, unknown>[]): Promise<Record<string, unknown>[]> {
    const items: Record<string, unknown>[] = [];
    for (let round = 0; keys.length > 0; round++) {
      if (round === BATCH_GET_ROUNDS) throw new Error('BatchGetItem left keys unprocessed; the sweep will retry');
      const answer: BatchGetCommandOutput = await this.client.send(
        new BatchGetCommand({
          RequestItems: {
            [this.tableName]: {
              Keys: keys,
              ConsistentRead: true,
              ProjectionExpression: 'pk, sk, dispatchedAt, pendingShard',
            },
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
      shard,
    }));
  }
}
