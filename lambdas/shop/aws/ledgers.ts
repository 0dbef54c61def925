import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { OrderCancelledEvent, OrderPlacedEvent } from '../domain/events';
import { orderPlacedEventId, type OrderLine } from '../domain/order';
import {
  EffectConditionFailed,
  InboxLedger,
  type LedgerResult,
  type RecordWork,
  STALE,
  type TransactItem,
} from '@exactly-once/runtime';
import type { EffectsReader, FulfilmentLedger, LoyaltyLedger } from '../ports/ledgers';
import { customerKey, fulfilmentKey, inventoryKey } from './effects-table';

/**
 * Fulfilment: per-order state `FULFILMENT#<orderId>` with a version
 * (0 none, 1 reserved, 2 released/cancelled). Each event moves it only from the
 * state before it, so a stale or out-of-order event is a no-op, never an effect.
 */
export class DynamoDbFulfilmentLedger extends InboxLedger implements FulfilmentLedger {
  async reserve(event: OrderPlacedEvent, work?: RecordWork): Promise<LedgerResult> {
    try {
      return await this.transact(
        event,
        [
          // Any existing state is newer than "placed": the cancel got here first.
          this.firstState(event.entityId, 1, 'RESERVED'),
          ...this.stockDeltas(event.payload.items, 1),
        ],
        work,
      );
    } catch (error) {
      if (error instanceof EffectConditionFailed && error.effectIndex === 0) return STALE;
      throw error;
    }
  }

  async release(event: OrderCancelledEvent, work?: RecordWork): Promise<LedgerResult> {
    try {
      return await this.transact(
        event,
        [
          {
            Update: {
              TableName: this.options.tableName,
              Key: fulfilmentKey(event.entityId),
              UpdateExpression: 'SET version = :released, #state = :state, updatedAt = :at',
              ConditionExpression: 'version = :reserved',
              ExpressionAttributeNames: { '#state': 'state' },
              ExpressionAttributeValues: {
                ':released': 2,
                ':reserved': 1,
                ':state': 'RELEASED',
                ':at': this.now().toISOString(),
              },
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            },
          },
          ...this.stockDeltas(event.payload.items, -1),
          // A redriven OrderPlaced (e.g. dead-lettered while the warehouse was down) must not send PICK now.
          ...this.supersede({ eventId: orderPlacedEventId(event.entityId), tenant: event.tenant }, event),
        ],
        work,
      );
    } catch (error) {
      if (!(error instanceof EffectConditionFailed) || error.effectIndex !== 0) throw error;
      if (error.oldItem !== undefined) return STALE; // already version 2
      // Nothing reserved yet (cancel overtook place, e.g. after a DLQ redrive):
      // record the cancellation so the late OrderPlaced is recognised as stale.
      return this.recordCancelBeforeReserve(event, work);
    }
  }

  private async recordCancelBeforeReserve(event: OrderCancelledEvent, work?: RecordWork): Promise<LedgerResult> {
    // A concurrent reserve between the two transactions fails this condition;
    // the error is transient and the retry takes the normal release path.
    // The late OrderPlaced is stale (its state put fails), so it never reaches the warehouse.
    return this.transact(event, [this.firstState(event.entityId, 2, 'CANCELLED_UNRESERVED')], work);
  }

  /** An order's first fulfilment state, put only where it has none yet. */
  private firstState(orderId: string, version: 1 | 2, state: string): TransactItem {
    return {
      Put: {
        TableName: this.options.tableName,
        Item: { ...fulfilmentKey(orderId), orderId, version, state, updatedAt: this.now().toISOString() },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    };
  }

  private stockDeltas(items: readonly OrderLine[], sign: 1 | -1): TransactItem[] {
    // One update per SKU: a transaction may not touch the same item twice.
    const bySku = new Map<string, number>();
    for (const line of items) bySku.set(line.sku, (bySku.get(line.sku) ?? 0) + line.quantity);
    return [...bySku].map(([sku, quantity]) => ({
      Update: {
        TableName: this.options.tableName,
        Key: inventoryKey(sku),
        UpdateExpression: 'SET sku = :sku ADD reserved :delta',
        ExpressionAttributeValues: { ':sku': sku, ':delta': sign * quantity },
      },
    }));
  }
}

/** Loyalty points: `points += n`, a non-idempotent ADD guarded only by the inbox claim. */
export class DynamoDbLoyaltyLedger extends InboxLedger implements LoyaltyLedger {
  async credit(event: OrderPlacedEvent, points: number, work?: RecordWork): Promise<LedgerResult> {
    return this.transact(
      event,
      [
        {
          Update: {
            TableName: this.options.tableName,
            Key: customerKey(event.tenant, event.payload.customerId),
            UpdateExpression: 'SET customerId = :id ADD points :points',
            ExpressionAttributeValues: { ':id': event.payload.customerId, ':points': points },
          },
        },
      ],
      work,
    );
  }
}

export class DynamoDbEffectsReader implements EffectsReader {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async customerPoints(caller: string, customerId: string): Promise<number | undefined> {
    const item = await this.get(customerKey(caller, customerId));
    return item === undefined ? undefined : Number(item.points ?? 0);
  }

  async reservedStock(sku: string): Promise<number | undefined> {
    const item = await this.get(inventoryKey(sku));
    return item === undefined ? undefined : Number(item.reserved ?? 0);
  }

  private async get(key: { pk: string; sk: string }) {
    const { Item } = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }),
    );
    return Item;
  }
}
