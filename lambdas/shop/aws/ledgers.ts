import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { OrderCancelledEvent, OrderPlacedEvent } from '../domain/events';
import type { OrderLine } from '../domain/order';
import { InboxLedger, type LedgerResult, type RecordWork, type TransactItem } from '@exactly-once/runtime';
import {
  EntityConditionFailed,
  SequencedLedger,
  sequencedEntityKey,
  type EntityUpdate,
  type SequencedLedgerOptions,
} from '@exactly-once/runtime/aws';
import type { EffectsReader, FulfilmentLedger, LoyaltyLedger } from '../ports/ledgers';
import { customerKey, inventoryKey } from './effects-table';

/**
 * Fulfilment on the sequenced ledger (ConsumerSpec `ledger: 'sequenced'`): the order's fulfilment state
 * lives on its entity item `sequencedEntityKey('fulfilment', event)` (`EFFECT#fulfilment#<tenant>#<orderId>`),
 * and the claim is that item's sequence, so OrderPlaced (v1) and OrderCancelled (v2) each move it in one
 * transaction with the stock per SKU, and no inbox item is written. The sequence makes a stale or
 * out-of-order event a no-op: an OrderPlaced after its order's cancel is judged stale, never reserved.
 * A cancel's claim takes the item's one owed-call slot (`newerSupersedes`), so a PICK still owed (its
 * OrderPlaced dead-lettered and redriven later) is never sent after the CANCEL_PICK.
 */
export class DynamoDbFulfilmentLedger extends SequencedLedger implements FulfilmentLedger {
  constructor(client: DynamoDBDocumentClient, options: SequencedLedgerOptions) {
    super(client, options, true);
  }

  reserve(event: OrderPlacedEvent, work?: RecordWork): Promise<LedgerResult> {
    return this.claimOnEntity(
      event,
      this.pkOf(event),
      this.state(event, 'RESERVED'),
      work,
      this.stockDeltas(event.payload.items, 1),
    );
  }

  async release(event: OrderCancelledEvent, work?: RecordWork): Promise<LedgerResult> {
    try {
      // Stock is released only where this order's place reserved it.
      const released = this.state(event, 'RELEASED');
      return await this.claimOnEntity(
        event,
        this.pkOf(event),
        {
          ...released,
          condition: '#state = :reserved',
          values: { ...released.values, ':reserved': 'RESERVED' },
        },
        work,
        this.stockDeltas(event.payload.items, -1),
      );
    } catch (error) {
      if (!(error instanceof EntityConditionFailed)) throw error;
      return this.recordCancelBeforeReserve(event, work);
    }
  }

  /**
   * Nothing reserved yet (the cancel overtook its place, e.g. after a DLQ redrive): the cancel is recorded
   * alone, so the late OrderPlaced is stale and never reaches the warehouse. Only where the order has no
   * state at all: a place applied between the two writes makes this one fail, and the retry releases it.
   */
  private async recordCancelBeforeReserve(event: OrderCancelledEvent, work?: RecordWork): Promise<LedgerResult> {
    const unreserved = this.state(event, 'CANCELLED_UNRESERVED');
    try {
      return await this.claimOnEntity(
        event,
        this.pkOf(event),
        { ...unreserved, condition: 'attribute_not_exists(#state)' },
        work,
      );
    } catch (error) {
      if (!(error instanceof EntityConditionFailed)) throw error;
      throw new Error(
        `fulfilment: ${event.entityId} was reserved while its cancel ${event.eventId} was being recorded: retried, to release it`,
      );
    }
  }

  private pkOf(event: OrderPlacedEvent | OrderCancelledEvent): string {
    return sequencedEntityKey(this.consumer, event).pk;
  }

  /** The order's fulfilment state and when it was set. */
  private state(event: OrderPlacedEvent | OrderCancelledEvent, state: string) {
    return {
      set: ['orderId = :orderId', '#state = :state', 'updatedAt = :at'],
      names: { '#state': 'state' },
      values: { ':orderId': event.entityId, ':state': state, ':at': this.now().toISOString() },
    } satisfies EntityUpdate;
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
