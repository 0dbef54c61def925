import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand, QueryCommand, TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { OrderEvent } from '../domain/events';
import type { CancelResult, OrderRepository, PlaceResult, StoredOrder } from '../ports/order-repository';
import {
  customerAccessKey,
  customerAccessPk,
  ENTITY_CUSTOMER_ACCESS,
  ENTITY_ORDER,
  ORDER_SK,
  ORDER_PK_PREFIX,
  orderPk,
} from './order-table';
import { outboxPut } from '@exactly-once/runtime/aws';
import { inChildSpan } from '@exactly-once/runtime/runtime';

export class DynamoDbOrderRepository implements OrderRepository {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async place(order: StoredOrder, event: OrderEvent): Promise<PlaceResult> {
    try {
      await this.transact(
        () =>
          new TransactWriteCommand({
            TransactItems: [
              {
                Put: {
                  TableName: this.tableName,
                  Item: { pk: orderPk(order.orderId), sk: ORDER_SK, entity: ENTITY_ORDER, ...order, version: 1 },
                  // The guard that makes a second order impossible, whatever happened to the idempotency record.
                  ConditionExpression: 'attribute_not_exists(pk)',
                  ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
                },
              },
              this.outboxPut(event),
              // The caller's access to the customer (GET /customers/{id}). Unconditional: its key is the
              // order's, so a second write is the same item; and it never fails the order's transaction.
              {
                Put: {
                  TableName: this.tableName,
                  Item: { ...customerAccessKey(order), entity: ENTITY_CUSTOMER_ACCESS },
                },
              },
            ],
          }),
      );
      return { kind: 'created' };
    } catch (error) {
      const existing = conditionFailedItem(error);
      if (existing === null) throw error;
      return { kind: 'exists', order: existing ?? (await this.mustGet(order.orderId)) };
    }
  }

  async cancel(order: StoredOrder, cancelledAt: string, event: OrderEvent): Promise<CancelResult> {
    try {
      await this.transact(
        () =>
          new TransactWriteCommand({
            TransactItems: [
              {
                Update: {
                  TableName: this.tableName,
                  Key: { pk: orderPk(order.orderId), sk: ORDER_SK },
                  UpdateExpression: 'SET #status = :cancelled, cancelledAt = :at, version = :v',
                  ConditionExpression: '#status = :placed',
                  ExpressionAttributeNames: { '#status': 'status' },
                  ExpressionAttributeValues: {
                    ':cancelled': 'CANCELLED',
                    ':placed': 'PLACED',
                    ':at': cancelledAt,
                    ':v': 2,
                  },
                  ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
                },
              },
              this.outboxPut(event),
            ],
          }),
      );
      return { kind: 'cancelled', order: { ...order, status: 'CANCELLED', cancelledAt } };
    } catch (error) {
      const existing = conditionFailedItem(error);
      if (existing === null) throw error;
      return { kind: 'not-cancellable', order: existing ?? (await this.get(order.orderId)) };
    }
  }

  async get(orderId: string): Promise<StoredOrder | undefined> {
    const { Item } = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: { pk: orderPk(orderId), sk: ORDER_SK }, ConsistentRead: true }),
    );
    return Item === undefined ? undefined : toStoredOrder(Item);
  }

  async hasPlacedFor(caller: string, customerId: string): Promise<boolean> {
    const { Items } = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': customerAccessPk(caller, customerId) },
        ProjectionExpression: 'pk',
        Limit: 1,
        // Read-your-writes: a caller reads its customer right after placing the order.
        ConsistentRead: true,
      }),
    );
    return (Items ?? []).length > 0;
  }

  private async mustGet(orderId: string): Promise<StoredOrder> {
    const order = await this.get(orderId);
    if (order === undefined) throw new Error(`Order ${orderId} failed its condition but cannot be read`);
    return order;
  }

  /**
   * A transaction that writes an outbox event, in the trace's `outbox-write` span: built inside it, so
   * the event's outbox item carries that span's traceparent on to the relay.
   */
  private async transact(command: () => TransactWriteCommand): Promise<void> {
    await inChildSpan('outbox-write', () => this.client.send(command()));
  }

  private outboxPut(event: OrderEvent) {
    return outboxPut(this.tableName, event, ORDER_PK_PREFIX);
  }
}

/**
 * For a transaction cancelled only by the first item's condition: the item it
 * returned (or undefined when the emulator/SDK did not return it). For any
 * other error: null, meaning "not a condition failure, rethrow".
 */
function conditionFailedItem(error: unknown): StoredOrder | undefined | null {
  if (!(error instanceof TransactionCanceledException)) return null;
  const reasons = error.CancellationReasons ?? [];
  const first = reasons[0];
  const othersOk = reasons.slice(1).every((r) => r.Code === 'None' || r.Code === 'ConditionalCheckFailed');
  if (first?.Code !== 'ConditionalCheckFailed' || !othersOk) return null;
  return first.Item === undefined ? undefined : toStoredOrder(unmarshall(first.Item));
}

function toStoredOrder(item: Record<string, unknown>): StoredOrder {
  const { pk: _pk, sk: _sk, entity: _entity, version: _version, ...rest } = item;
  return rest as unknown as StoredOrder;
}
