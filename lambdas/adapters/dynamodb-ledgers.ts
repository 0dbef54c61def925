import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand, TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { OrderCancelledEvent, OrderPlacedEvent } from '../domain/events';
import type { OrderLine } from '../domain/order';
import type { ApplyOutcome, EffectsReader, FulfilmentLedger, LoyaltyLedger } from '../ports/ledgers';
import { customerKey, fulfilmentKey, inboxKey, INBOX_TTL_ATTRIBUTE, inventoryKey } from './effects-table';

type TransactItem = NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']>[number];

export interface LedgerOptions {
  tableName: string;
  /** How long an inbox claim is kept; must outlive every possible redelivery (see the Aspects). */
  inboxTtlSeconds: number;
  now?: () => Date;
  /**
   * Test-only: skip the inbox claim (and fulfilment's state guard on reserve), so duplicates become
   * double effects, to prove the proof kit notices them. Never set in a deployment.
   */
  unsafeDisableInbox?: () => boolean;
}

/**
 * The transactional inbox. Every effect is written in one TransactWriteItems
 * together with a Put of the claim `INBOX#<consumer>#<eventId>` conditioned on
 * `attribute_not_exists(pk)`. If the claim's condition fails, the whole
 * transaction (effect included) is cancelled and the event is a duplicate. No
 * other failure means "already done".
 */
abstract class InboxLedger {
  protected readonly now: () => Date;

  constructor(
    protected readonly client: DynamoDBDocumentClient,
    protected readonly consumer: string,
    protected readonly options: LedgerOptions,
  ) {
    this.now = options.now ?? (() => new Date());
  }

  protected claim(eventId: string): TransactItem[] {
    if (this.options.unsafeDisableInbox?.() === true) return [];
    const now = this.now();
    return [
      {
        Put: {
          TableName: this.options.tableName,
          Item: {
            ...inboxKey(this.consumer, eventId),
            consumer: this.consumer,
            eventId,
            claimedAt: now.toISOString(),
            [INBOX_TTL_ATTRIBUTE]: Math.floor(now.getTime() / 1000) + this.options.inboxTtlSeconds,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
    ];
  }

  /**
   * Runs claim + effect. Resolves 'applied', or 'duplicate' when the claim's
   * condition failed; throws every other error, including an effect condition
   * failure, which is returned to the caller as {@link EffectConditionFailed}.
   */
  protected async transact(eventId: string, effect: TransactItem[]): Promise<ApplyOutcome> {
    const claim = this.claim(eventId);
    try {
      await this.client.send(new TransactWriteCommand({ TransactItems: [...claim, ...effect] }));
      return 'applied';
    } catch (error) {
      if (!(error instanceof TransactionCanceledException)) throw error;
      const reasons = error.CancellationReasons ?? [];
      if (claim.length > 0 && reasons[0]?.Code === 'ConditionalCheckFailed') return 'duplicate';
      const failedIndex = reasons.findIndex((r) => r.Code === 'ConditionalCheckFailed');
      if (failedIndex >= 0 && reasons.every((r) => r.Code === 'None' || r.Code === 'ConditionalCheckFailed')) {
        const item = reasons[failedIndex].Item;
        throw new EffectConditionFailed(failedIndex - claim.length, item === undefined ? undefined : unmarshall(item));
      }
      throw error;
    }
  }

  protected stockDeltas(items: readonly OrderLine[], sign: 1 | -1): TransactItem[] {
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

/** An effect's own condition failed (not the claim): carries which effect item and its old image. */
export class EffectConditionFailed extends Error {
  constructor(
    readonly effectIndex: number,
    readonly oldItem: Record<string, unknown> | undefined,
  ) {
    super(`Effect condition failed on item ${effectIndex}`);
    this.name = 'EffectConditionFailed';
  }
}

/**
 * Fulfilment: per-order state `FULFILMENT#<orderId>` with a version
 * (0 none, 1 reserved, 2 released/cancelled). Each event moves it only from the
 * state before it, so a stale or out-of-order event is a no-op, never an effect.
 */
export class DynamoDbFulfilmentLedger extends InboxLedger implements FulfilmentLedger {
  constructor(client: DynamoDBDocumentClient, options: LedgerOptions) {
    super(client, 'fulfilment', options);
  }

  async reserve(event: OrderPlacedEvent): Promise<ApplyOutcome> {
    try {
      return await this.transact(event.eventId, [
        {
          Put: {
            TableName: this.options.tableName,
            Item: {
              ...fulfilmentKey(event.orderId),
              orderId: event.orderId,
              version: 1,
              state: 'RESERVED',
              updatedAt: this.now().toISOString(),
            },
            // Any existing state is newer than "placed": the cancel got here first.
            // The test-only broken consumer drops this guard too: the state alone would
            // still stop a duplicate reserve, and the proof kit could not show a double.
            ...(this.options.unsafeDisableInbox?.() === true
              ? {}
              : { ConditionExpression: 'attribute_not_exists(pk)' }),
          },
        },
        ...this.stockDeltas(event.items, 1),
      ]);
    } catch (error) {
      if (error instanceof EffectConditionFailed && error.effectIndex === 0) return 'stale';
      throw error;
    }
  }

  async release(event: OrderCancelledEvent): Promise<ApplyOutcome> {
    try {
      return await this.transact(event.eventId, [
        {
          Update: {
            TableName: this.options.tableName,
            Key: fulfilmentKey(event.orderId),
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
        ...this.stockDeltas(event.items, -1),
      ]);
    } catch (error) {
      if (!(error instanceof EffectConditionFailed) || error.effectIndex !== 0) throw error;
      if (error.oldItem !== undefined) return 'stale'; // already version 2
      // Nothing reserved yet (cancel overtook place, e.g. after a DLQ redrive):
      // record the cancellation so the late OrderPlaced is recognised as stale.
      return this.recordCancelBeforeReserve(event);
    }
  }

  private async recordCancelBeforeReserve(event: OrderCancelledEvent): Promise<ApplyOutcome> {
    // A concurrent reserve between the two transactions fails this condition;
    // the error is transient and the retry takes the normal release path.
    return this.transact(event.eventId, [
      {
        Put: {
          TableName: this.options.tableName,
          Item: {
            ...fulfilmentKey(event.orderId),
            orderId: event.orderId,
            version: 2,
            state: 'CANCELLED_UNRESERVED',
            updatedAt: this.now().toISOString(),
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
    ]);
  }
}

/** Loyalty points: `points += n`, a non-idempotent ADD guarded only by the inbox claim. */
export class DynamoDbLoyaltyLedger extends InboxLedger implements LoyaltyLedger {
  constructor(client: DynamoDBDocumentClient, options: LedgerOptions) {
    super(client, 'loyalty', options);
  }

  async credit(event: OrderPlacedEvent, points: number): Promise<ApplyOutcome> {
    return this.transact(event.eventId, [
      {
        Update: {
          TableName: this.options.tableName,
          Key: customerKey(event.customerId),
          UpdateExpression: 'SET customerId = :id ADD points :points',
          ExpressionAttributeValues: { ':id': event.customerId, ':points': points },
        },
      },
    ]);
  }
}

export class DynamoDbEffectsReader implements EffectsReader {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async customerPoints(customerId: string): Promise<number | undefined> {
    const item = await this.get(customerKey(customerId));
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
