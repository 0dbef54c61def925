import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { OrderCancelledEvent, OrderPlacedEvent } from '../domain/events';
import { orderPlacedEventId, type OrderLine } from '../domain/order';
import {
  EffectConditionFailed,
  InboxLedger,
  type LedgerResult,
  type ProviderCallRecord,
  type RecordWork,
  STALE,
  type TransactItem,
} from '@exactly-once/runtime';
import {
  EntityConditionFailed,
  SequencedLedger,
  sequencedEntityKey,
  type EntityUpdate,
  type LedgerOptions,
  type SequencedLedgerOptions,
} from '@exactly-once/runtime/aws';
import type { EffectsReader, FulfilmentLedger, LoyaltyLedger } from '../ports/ledgers';
import { customerKey, fulfilmentKey, inventoryKey } from './effects-table';

/** What the owed call's lease and done-mark are handed: the event and where its claim is. */
type EventRef = Parameters<ProviderCallRecord['recordProviderCallDone']>[0];
type ProviderCallLease = Awaited<ReturnType<ProviderCallRecord['leaseProviderCall']>>;

/**
 * Which ledger fulfilment starts a new order on, and which one it reads for an order begun on the other
 * (docs/runbook.md, upgrade):
 * - `'read'` (the default): a new order on the sequenced ledger; an order that has an inbox-ledger item
 *   (`FULFILMENT#<orderId>`, written by a stack deployed before fulfilment moved) finishes on the inbox ledger;
 * - `'off'`: the sequenced ledger only, nothing read first: a stack that never ran the inbox ledger, or whose
 *   transition window has passed;
 * - `'write'`: the first step of a rollback-safe upgrade: a new order on the inbox ledger, as the release before
 *   this one starts it; an order that has a sequenced item finishes on the sequenced ledger.
 *
 * @example
 * ```ts
 * const mode: LegacyFulfilment = 'read'; // FULFILMENT_LEGACY_LEDGER unset
 * ```
 */
export type LegacyFulfilment = 'read' | 'off' | 'write';

/** The settings fulfilment's ledger is built with: the sequenced ledger's, and the inbox's for legacy orders. */
export type FulfilmentLedgerOptions = SequencedLedgerOptions & Partial<Pick<LedgerOptions, 'inboxTtlSeconds' | 'keys'>>;

/**
 * Fulfilment's ledger: the sequenced ledger ({@link SequencedFulfilmentLedger}) or the transactional inbox
 * ({@link InboxFulfilmentLedger}), chosen per order by {@link LegacyFulfilment}. Where both are in use, the
 * other ledger's item of the order is read first: one consistent GetItem of its key alone per event (1 read
 * unit), and an order that has it finishes on that ledger. Without the read, under `'read'`, an OrderPlaced
 * the inbox ledger applied, delivered again, would reserve the stock again on the new item, and a cancel of
 * an order reserved there would find nothing reserved and keep its stock. An order's item on the ledger it
 * started on is written before any other ledger could: one order's events are handled one at a time (FIFO
 * group = orderId), so no item of the other ledger appears between the read and the claim. The owed call's
 * lease and done-mark go to the ledger whose claim the event has (an inbox entry's key starts `INBOX#`).
 *
 * @example What the fulfilment consumer builds (entry-points/fulfilment-consumer.ts)
 * ```ts
 * const ledger = new DynamoDbFulfilmentLedger(wiring.documents, wiring.ledgerOptions, wiring.legacyFulfilment);
 * ```
 */
export class DynamoDbFulfilmentLedger implements FulfilmentLedger {
  readonly consumer: string;
  private readonly sequenced: SequencedFulfilmentLedger;
  private readonly legacy: InboxFulfilmentLedger | undefined;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly options: FulfilmentLedgerOptions,
    private readonly mode: LegacyFulfilment = 'read',
  ) {
    this.consumer = options.consumer;
    this.sequenced = new SequencedFulfilmentLedger(client, options);
    if (mode === 'off') return;
    if (options.inboxTtlSeconds === undefined)
      throw new Error(`fulfilment: the inbox ledger's orders ('${mode}') need its inboxTtlSeconds`);
    // The inbox ledger under a sequenced spec on purpose: its claims are kept by the inbox TTL as before.
    this.legacy = new InboxFulfilmentLedger(client, {
      ...options,
      inboxTtlSeconds: options.inboxTtlSeconds,
      ledger: 'inbox',
    });
  }

  async reserve(event: OrderPlacedEvent, work?: RecordWork): Promise<LedgerResult> {
    return (await this.ledgerOf(event, work)).reserve(event, work);
  }

  async release(event: OrderCancelledEvent, work?: RecordWork): Promise<LedgerResult> {
    return (await this.ledgerOf(event, work)).release(event, work);
  }

  recordProviderCallDone(event: EventRef, work?: RecordWork): Promise<void> {
    return this.claimedBy(event).recordProviderCallDone(event, work);
  }

  leaseProviderCall(event: EventRef, work: RecordWork): Promise<ProviderCallLease> {
    return this.claimedBy(event).leaseProviderCall(event, work);
  }

  releaseProviderCallLease(event: EventRef, work: RecordWork): Promise<void> {
    return this.claimedBy(event).releaseProviderCallLease(event, work);
  }

  /** The ledger the order began on: the one whose item it has, else the one this mode starts orders on. */
  private async ledgerOf(event: OrderPlacedEvent | OrderCancelledEvent, work?: RecordWork) {
    if (this.legacy === undefined) return this.sequenced;
    const [other, starting, key] =
      this.mode === 'write'
        ? [this.sequenced, this.legacy, sequencedEntityKey(this.consumer, event)]
        : [this.legacy, this.sequenced, fulfilmentKey(event.entityId)];
    const { Item } = await this.client.send(
      new GetCommand({ TableName: this.options.tableName, Key: key, ConsistentRead: true, ProjectionExpression: 'pk' }),
      { abortSignal: work?.signal },
    );
    return Item === undefined ? starting : other;
  }

  private claimedBy(event: EventRef): FulfilmentLedger {
    return this.legacy !== undefined && event.claim?.inboxPk.startsWith('INBOX#') === true
      ? this.legacy
      : this.sequenced;
  }
}

/**
 * Fulfilment on the sequenced ledger (ConsumerSpec `ledger: 'sequenced'`): the order's fulfilment state
 * lives on its entity item `sequencedEntityKey('fulfilment', event)` (`EFFECT#fulfilment#<tenant>#<orderId>`),
 * and the claim is that item's sequence, so OrderPlaced (v1) and OrderCancelled (v2) each move it in one
 * transaction with the stock per SKU, and no inbox item is written. The sequence makes a stale or
 * out-of-order event a no-op: an OrderPlaced after its order's cancel is judged stale, never reserved.
 * A cancel's claim takes the item's one owed-call slot (`newerSupersedes`), so a PICK still owed (its
 * OrderPlaced dead-lettered and redriven later) is never sent after the CANCEL_PICK.
 */
export class SequencedFulfilmentLedger extends SequencedLedger implements FulfilmentLedger {
  constructor(client: DynamoDBDocumentClient, options: SequencedLedgerOptions) {
    super(client, options, true);
  }

  reserve(event: OrderPlacedEvent, work?: RecordWork): Promise<LedgerResult> {
    return this.claimOnEntity(
      event,
      this.pkOf(event),
      this.state(event, 'RESERVED'),
      work,
      stockDeltas(this.options.tableName, event.payload.items, 1),
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
        stockDeltas(this.options.tableName, event.payload.items, -1),
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
}

/**
 * Fulfilment on the transactional inbox, as a stack deployed before the sequenced ledger ran it: per-order
 * state `FULFILMENT#<orderId>` with a version (0 none, 1 reserved, 2 released/cancelled) beside an inbox
 * entry per event. Each event moves it only from the state before it, so a stale or out-of-order event is a
 * no-op, never an effect. Kept for the orders such a stack began ({@link DynamoDbFulfilmentLedger}): they
 * finish here, where their claims, supersede marks and state are.
 */
export class InboxFulfilmentLedger extends InboxLedger implements FulfilmentLedger {
  async reserve(event: OrderPlacedEvent, work?: RecordWork): Promise<LedgerResult> {
    try {
      return await this.transact(
        event,
        [
          // Any existing state is newer than "placed": the cancel got here first.
          this.firstState(event.entityId, 1, 'RESERVED'),
          ...stockDeltas(this.options.tableName, event.payload.items, 1),
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
          ...stockDeltas(this.options.tableName, event.payload.items, -1),
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
}

/** The stock per SKU an order's lines move: one update per SKU, as a transaction may not touch an item twice. */
function stockDeltas(tableName: string, items: readonly OrderLine[], sign: 1 | -1): TransactItem[] {
  const bySku = new Map<string, number>();
  for (const line of items) bySku.set(line.sku, (bySku.get(line.sku) ?? 0) + line.quantity);
  return [...bySku].map(([sku, quantity]) => ({
    Update: {
      TableName: tableName,
      Key: inventoryKey(sku),
      UpdateExpression: 'SET sku = :sku ADD reserved :delta',
      ExpressionAttributeValues: { ':sku': sku, ':delta': sign * quantity },
    },
  }));
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
