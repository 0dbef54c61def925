import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  GetCommand,
  TransactWriteCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { OrderCancelledEvent, OrderPlacedEvent } from '../domain/events';
import { orderPlacedEventId, type OrderLine } from '../domain/order';
import type { RecordWork } from '../domain/record-work';
import type { EventEnvelope } from '../messaging/envelope';
import type {
  EffectsReader,
  EntityEffectLedger,
  FulfilmentLedger,
  LedgerResult,
  LoyaltyLedger,
  ProviderCallLease,
} from '../ports/ledgers';
import { withContentionRetries, type InProcessRetry } from '../shared/contention-retry';
import {
  customerKey,
  entityEffectKey,
  expiresAfter,
  fulfilmentKey,
  inboxKey,
  INBOX_TTL_ATTRIBUTE,
  inventoryKey,
  PROVIDER_CALL_DONE_ATTRIBUTE,
  PROVIDER_CALL_LEASE_ATTRIBUTE,
  PROVIDER_CALL_LEASE_HOLDER_ATTRIBUTE,
  SUPERSEDED_BY_ATTRIBUTE,
} from './effects-table';

/** The lease's two attributes, as the lease's expressions name them. */
const LEASE_NAMES = { '#lease': PROVIDER_CALL_LEASE_ATTRIBUTE, '#holder': PROVIDER_CALL_LEASE_HOLDER_ATTRIBUTE };

type TransactItem = NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']>[number];

export interface LedgerOptions {
  /** The consumer's spec name (lambdas/consumers.ts): its inbox key prefix `INBOX#<consumer>#`. */
  consumer: string;
  tableName: string;
  /** How long an inbox claim is kept; must outlive every possible redelivery (see the Aspects). */
  inboxTtlSeconds: number;
  now?: () => Date;
  /**
   * How a transaction or a done-mark is retried on contention inside the
   * invocation (each write on its own, never the provider call between them).
   * Default: not retried here (the queue's backoff retries it).
   */
  contention?: InProcessRetry;
  /**
   * The local runtime's build only: skip the inbox claim (and fulfilment's state guard on
   * reserve), so duplicates become double effects, to prove the proof kit notices them.
   * Every other bundle drops the check (lambdas/faults/build.ts).
   */
  unsafeDisableInbox?: () => boolean;
}

/**
 * The transactional inbox. Every effect is written in one TransactWriteItems
 * together with a Put of the claim `INBOX#<consumer>#<eventId>` conditioned on
 * `attribute_not_exists(pk)`. If the claim's condition fails, the whole
 * transaction (effect included) is cancelled and the event is a duplicate. No
 * other failure means "already done".
 *
 * The claim asks for the existing entry on failure (ALL_OLD), so a duplicate
 * learns from the cancellation itself whether the provider call is still owed:
 * no extra read, and the only extra write is marking the call done.
 */
abstract class InboxLedger {
  protected readonly now: () => Date;

  /** Whose inbox this is: the spec's name, from the wiring, never written here. */
  readonly consumer: string;

  constructor(
    protected readonly client: DynamoDBDocumentClient,
    protected readonly options: LedgerOptions,
  ) {
    this.consumer = options.consumer;
    this.now = options.now ?? (() => new Date());
  }

  /** Literally false, and dropped with the option, in every bundle but the local runtime's. */
  protected inboxBypassed(): boolean {
    return process.env.INBOX_BYPASS_BUILD === 'true' && this.options.unsafeDisableInbox?.() === true;
  }

  /**
   * The claim; with `work`, it also takes the lease on the provider call that
   * follows the commit, so a concurrent copy of the event finds the call leased
   * at no extra write.
   */
  protected claim(eventId: string, work: RecordWork | undefined): TransactItem[] {
    if (this.inboxBypassed()) return [];
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
            [INBOX_TTL_ATTRIBUTE]: expiresAfter(now, this.options.inboxTtlSeconds),
            ...(work === undefined
              ? {}
              : {
                  [PROVIDER_CALL_LEASE_ATTRIBUTE]: work.leaseUntil,
                  [PROVIDER_CALL_LEASE_HOLDER_ATTRIBUTE]: work.leaseHolder,
                }),
          },
          ConditionExpression: 'attribute_not_exists(pk)',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
    ];
  }

  /**
   * After the provider accepted the call: a duplicate from now on leaves the
   * provider alone, however late it comes. Conditioned on the entry existing, so
   * it never creates an entry without its TTL; with the inbox switched off
   * (test-only) there is nothing to record.
   */
  async recordProviderCallDone(eventId: string, work?: RecordWork): Promise<void> {
    if (this.inboxBypassed()) return;
    await this.updateInboxEntry(eventId, work, {
      UpdateExpression: 'SET #done = :at',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeNames: { '#done': PROVIDER_CALL_DONE_ATTRIBUTE },
      ExpressionAttributeValues: { ':at': this.now().toISOString() },
    });
  }

  /**
   * A duplicate that owes the provider its call takes the call's lease first:
   * a conditional update that succeeds only while the call is not done, not
   * superseded, and no other copy holds an unexpired lease (this try's own
   * lease counts as free). 'held' means another delivery is calling (or was,
   * until its invocation ended): this copy must not call now. The claim of a
   * first delivery holds the lease already.
   */
  async leaseProviderCall(eventId: string, work: RecordWork): Promise<ProviderCallLease> {
    if (this.inboxBypassed()) return 'granted';
    try {
      await this.updateInboxEntry(eventId, work, {
        UpdateExpression: 'SET #lease = :until, #holder = :me',
        ConditionExpression:
          'attribute_exists(pk) AND attribute_not_exists(#done) AND attribute_not_exists(#superseded) ' +
          'AND (attribute_not_exists(#lease) OR #lease < :now OR #holder = :me)',
        ExpressionAttributeNames: {
          ...LEASE_NAMES,
          '#done': PROVIDER_CALL_DONE_ATTRIBUTE,
          '#superseded': SUPERSEDED_BY_ATTRIBUTE,
        },
        ExpressionAttributeValues: { ':until': work.leaseUntil, ':me': work.leaseHolder, ':now': this.now().getTime() },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      });
      return 'granted';
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      // Done or superseded since the claim was read: nothing is owed. Otherwise a live lease
      // (or, never expected, an entry gone): not now.
      return error.Item !== undefined && !providerCallPending(error.Item) ? 'done' : 'held';
    }
  }

  /**
   * After this try's provider call failed (the call has settled: nothing of it
   * is in flight any more): give the lease back, so the next try need not wait
   * for it to lapse. Only this try's own lease is removed; failing to remove it
   * costs only that wait, so the failure is logged by the caller, not thrown.
   */
  async releaseProviderCallLease(eventId: string, work: RecordWork): Promise<void> {
    if (this.inboxBypassed()) return;
    try {
      await this.updateInboxEntry(eventId, work, {
        UpdateExpression: 'REMOVE #lease, #holder',
        ConditionExpression: '#holder = :me',
        ExpressionAttributeNames: LEASE_NAMES,
        ExpressionAttributeValues: { ':me': work.leaseHolder },
      });
    } catch (error) {
      // Someone else's lease now (ours had lapsed and was taken): not ours to remove.
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  /** One UpdateItem on this consumer's inbox entry for `eventId`, with the record's signal, retried on contention. */
  private updateInboxEntry(
    eventId: string,
    work: RecordWork | undefined,
    update: Omit<UpdateCommandInput, 'TableName' | 'Key'>,
  ): Promise<unknown> {
    const input = { TableName: this.options.tableName, Key: inboxKey(this.consumer, eventId), ...update };
    return this.withRetries(() => this.client.send(new UpdateCommand(input), { abortSignal: work?.signal }), work);
  }

  /** One write, retried on contention in-process (options.contention), never past the record's deadline. */
  protected withRetries<T>(write: () => Promise<T>, work: RecordWork | undefined): Promise<T> {
    return this.options.contention === undefined
      ? write()
      : withContentionRetries(write, this.options.contention, work?.signal);
  }

  /**
   * A transaction item marking an earlier event's inbox entry superseded by
   * `eventId`: a duplicate of that earlier event must not reach the provider
   * after this one did. Creates the entry (with its TTL) if it is gone, which
   * then stands for "done, superseded" too.
   */
  protected supersede(earlierEventId: string, eventId: string): TransactItem[] {
    if (this.inboxBypassed()) return [];
    return [
      {
        Update: {
          TableName: this.options.tableName,
          Key: inboxKey(this.consumer, earlierEventId),
          UpdateExpression: 'SET #superseded = :by, #ttl = if_not_exists(#ttl, :expires)',
          ExpressionAttributeNames: { '#superseded': SUPERSEDED_BY_ATTRIBUTE, '#ttl': INBOX_TTL_ATTRIBUTE },
          ExpressionAttributeValues: {
            ':by': eventId,
            ':expires': expiresAfter(this.now(), this.options.inboxTtlSeconds),
          },
        },
      },
    ];
  }

  /**
   * Runs claim + effect. Resolves 'applied', or 'duplicate' when the claim's
   * condition failed (with whether the provider call is still owed, from the
   * entry the cancellation returned); throws every other error, including an
   * effect condition failure, which is returned to the caller as {@link EffectConditionFailed}.
   */
  protected async transact(eventId: string, effect: TransactItem[], work?: RecordWork): Promise<LedgerResult> {
    const claim = this.claim(eventId, work);
    try {
      await this.withRetries(
        () =>
          this.client.send(new TransactWriteCommand({ TransactItems: [...claim, ...effect] }), {
            abortSignal: work?.signal,
          }),
        work,
      );
      return { outcome: 'applied', providerCallPending: true };
    } catch (error) {
      if (!(error instanceof TransactionCanceledException)) throw error;
      const reasons = error.CancellationReasons ?? [];
      if (claim.length > 0 && reasons[0]?.Code === 'ConditionalCheckFailed') {
        return { outcome: 'duplicate', providerCallPending: providerCallPending(reasons[0].Item) };
      }
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

/**
 * Whether a duplicate still owes the provider its call, from the inbox entry
 * the failed claim returned. An entry that did not come back (ALL_OLD not
 * honoured) counts as pending: the call is repeated under its key, as before
 * completion was recorded.
 */
function providerCallPending(item: Parameters<typeof unmarshall>[0] | undefined): boolean {
  if (item === undefined) return true;
  const entry = unmarshall(item);
  return entry[PROVIDER_CALL_DONE_ATTRIBUTE] === undefined && entry[SUPERSEDED_BY_ATTRIBUTE] === undefined;
}

const STALE: LedgerResult = { outcome: 'stale', providerCallPending: false };

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
  async reserve(event: OrderPlacedEvent, work?: RecordWork): Promise<LedgerResult> {
    try {
      return await this.transact(
        event.eventId,
        [
          // Any existing state is newer than "placed": the cancel got here first.
          // The test-only broken consumer drops this guard too: the state alone would
          // still stop a duplicate reserve, and the proof kit could not show a double.
          this.firstState(event.entityId, 1, 'RESERVED', !this.inboxBypassed()),
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
        event.eventId,
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
          ...this.supersede(orderPlacedEventId(event.entityId), event.eventId),
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
    return this.transact(event.eventId, [this.firstState(event.entityId, 2, 'CANCELLED_UNRESERVED', true)], work);
  }

  /** An order's first fulfilment state, put only where it has none yet when `guarded`. */
  private firstState(orderId: string, version: 1 | 2, state: string, guarded: boolean): TransactItem {
    return {
      Put: {
        TableName: this.options.tableName,
        Item: { ...fulfilmentKey(orderId), orderId, version, state, updatedAt: this.now().toISOString() },
        ...(guarded ? { ConditionExpression: 'attribute_not_exists(pk)' } : {}),
      },
    };
  }
}

/** Loyalty points: `points += n`, a non-idempotent ADD guarded only by the inbox claim. */
export class DynamoDbLoyaltyLedger extends InboxLedger implements LoyaltyLedger {
  async credit(event: OrderPlacedEvent, points: number, work?: RecordWork): Promise<LedgerResult> {
    return this.transact(
      event.eventId,
      [
        {
          Update: {
            TableName: this.options.tableName,
            Key: customerKey(event.payload.customerId),
            UpdateExpression: 'SET customerId = :id ADD points :points',
            ExpressionAttributeValues: { ':id': event.payload.customerId, ':points': points },
          },
        },
      ],
      work,
    );
  }
}

/**
 * The effect of a consumer made by `npm run new:consumer`: one item per
 * consumer and entity (`EFFECT#<consumer>#<entityId>`), `appliedCount += 1` and
 * `lastEventId` under the inbox claim `INBOX#<consumer>#<eventId>`. The ADD is
 * deliberately not idempotent: only the claim stops a duplicate from counting
 * twice, so the proof kit can see a double when the claim is switched off.
 */
export class DynamoDbEntityEffectLedger extends InboxLedger implements EntityEffectLedger {
  async apply(event: EventEnvelope, work?: RecordWork): Promise<LedgerResult> {
    return this.transact(
      event.eventId,
      [
        {
          Update: {
            TableName: this.options.tableName,
            Key: entityEffectKey(this.consumer, event.entityId),
            UpdateExpression:
              'SET consumer = :consumer, entityId = :entityId, lastEventId = :eventId ADD appliedCount :one',
            ExpressionAttributeValues: {
              ':consumer': this.consumer,
              ':entityId': event.entityId,
              ':eventId': event.eventId,
              ':one': 1,
            },
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
