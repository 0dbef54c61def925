import { QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { OrderEvent } from '../domain/events';
import type { OutboxStore, PendingOutboxItem } from '../ports/outbox';
import { orderPk, outboxSk, PENDING_OUTBOX_INDEX, PENDING_SHARDS } from './order-table';

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

  async pendingOlderThan(olderThan: Date, limit: number): Promise<PendingOutboxItem[]> {
    const perShard = await Promise.all(
      this.shards().map((shard) => this.queryShard(shard, { before: olderThan.toISOString(), limit })),
    );
    return perShard
      .flat()
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
      .slice(0, limit);
  }

  async oldestPendingCreatedAt(): Promise<string | undefined> {
    const heads = await Promise.all(this.shards().map((shard) => this.queryShard(shard, { limit: 1 })));
    const oldest = heads
      .flat()
      .map((p) => p.createdAt)
      .sort()[0];
    return oldest;
  }

  private shards(): string[] {
    return Array.from({ length: PENDING_SHARDS }, (_, i) => String(i));
  }

  private async queryShard(shard: string, options: { before?: string; limit: number }): Promise<PendingOutboxItem[]> {
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
      itemKey: `${String(item.pk)}/${String(item.sk)}`,
      event: item.event,
      createdAt: String(item.createdAt),
    }));
  }
}
