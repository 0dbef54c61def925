import { randomUUID } from 'node:crypto';
import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  TransactWriteCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { RecordWork } from '../consumer/record-work';
import type { EventEnvelope } from '../envelope';
import { PermanentError } from '../errors';
import { eventFingerprint, fingerprintsDiffer } from '../inbox/fingerprint';
import type { EventRef, LedgerResult, ProviderCallLease } from '../inbox/ports';
import {
  belongsToAnotherTenant,
  claimedElsewhere,
  claimKeys,
  owedProviderKey,
  supersedeMarkVerdict,
  type InboxEntryKey,
  type LedgerKeyOptions,
} from './inbox-claim-keys';
import { metrics, MetricUnit } from '../runtime/observability';
import { withContentionRetries, type InProcessRetry } from '../runtime/contention-retry';
import { isInvalidRequest } from './transient-errors';
import { transactionSender } from './transaction-token';
import {
  claimExpiresAt,
  expiresAfter,
  FINGERPRINT_ATTRIBUTE,
  INBOX_TTL_ATTRIBUTE,
  PROVIDER_CALL_DONE_ATTRIBUTE,
  PROVIDER_KEY_WINDOW_FROM_ATTRIBUTE,
  PROVIDER_CALL_LEASE_ATTRIBUTE,
  PROVIDER_CALL_LEASE_HOLDER_ATTRIBUTE,
  PROVIDER_KEY_ATTRIBUTE,
  SUPERSEDED_BY_ATTRIBUTE,
  SUPERSEDED_BY_ENTITY_ATTRIBUTE,
  SUPERSEDED_BY_VERSION_ATTRIBUTE,
} from './inbox-table';

/** The lease's two attributes, as the lease's expressions name them. */
const LEASE_NAMES = { '#lease': PROVIDER_CALL_LEASE_ATTRIBUTE, '#holder': PROVIDER_CALL_LEASE_HOLDER_ATTRIBUTE };

/**
 * One item of a TransactWriteItems call, as the ledgers build them.
 *
 * @example An effect a ledger writes in the claim's transaction
 * ```ts
 * const addPoints: TransactItem = {
 *   Update: {
 *     TableName: this.options.tableName,
 *     Key: customerKey(event.payload.customerId),
 *     UpdateExpression: 'SET customerId = :id ADD points :points',
 *     ExpressionAttributeValues: { ':id': event.payload.customerId, ':points': points },
 *   },
 * };
 * ```
 */
export type TransactItem = NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']>[number];

/**
 * What an InboxLedger is built with: whose inbox it is, the table that holds the claims and the
 * effects they guard, and how long a claim is kept. A consumer takes them from its wiring, which
 * reads them from the environment the stack set.
 *
 * @example
 * ```ts
 * const ledger = new DynamoDbLoyaltyLedger(wiring.documents, wiring.ledgerOptions);
 * ```
 */
export interface LedgerOptions {
  /** The consumer's spec name: its inbox key prefix `INBOX#<consumer>#`. */
  consumer: string;
  /** The effects table: the inbox claims and the effects they guard share it, so they commit in one transaction. */
  tableName: string;
  /** How long an inbox claim is kept; must outlive every possible redelivery (see the Aspects). */
  inboxTtlSeconds: number;
  /**
   * How long the consumer's provider remembers an idempotency key (Stripe: 24 h). A duplicate whose
   * call is still owed more than this minus {@link PROVIDER_KEY_WINDOW_MARGIN_SECONDS} after its claim
   * is refused with ProviderKeyWindowPassed instead of calling: its first call may have been performed
   * with the answer lost, and the provider would no longer recognise the repeat.
   *
   * @default DEFAULT_PROVIDER_KEY_WINDOW_SECONDS (24 h)
   */
  providerKeyWindowSeconds?: number;
  /**
   * The clock the claims' timestamps and TTLs are taken from.
   *
   * @default () => new Date()
   */
  now?: () => Date;
  /**
   * How a transaction or a done-mark is retried on contention inside the
   * invocation (each write on its own, never the provider call between them).
   *
   * @default - not retried here (the queue's backoff retries it)
   */
  contention?: InProcessRetry;
  /**
   * Which key shape claims are written under and which shapes a claim is looked for under
   * (inbox-claim-keys.ts; docs/deploying.md, "Deploys and rollbacks while messages are in flight").
   *
   * @default write the current shape, find every known shape
   */
  keys?: LedgerKeyOptions;
  /**
   * Which ledger the consumer's spec names (`ConsumerSpec.ledger`), set by the consumer's wiring from its
   * environment. A ledger of the other kind refuses to be built with it: the spec decides the dedupe
   * horizon (none for `sequenced`), so an inbox ledger under a `sequenced` spec would keep claims that
   * expire with nothing refusing an event older than them.
   *
   * @default - not checked (a ledger built outside a consumer's wiring)
   */
  ledger?: 'inbox' | 'sequenced';
}

/**
 * How long a provider is taken to remember an idempotency key unless a ledger is told otherwise: 24 h,
 * Stripe's window and a common one. A provider that keeps keys longer can be given its own.
 *
 * @example
 * ```ts
 * new DynamoDbLoyaltyLedger(documents, { consumer: 'loyalty', tableName, inboxTtlSeconds, providerKeyWindowSeconds: DEFAULT_PROVIDER_KEY_WINDOW_SECONDS });
 * ```
 */
export const DEFAULT_PROVIDER_KEY_WINDOW_SECONDS = 86_400;

/**
 * How much sooner than the provider's window a repeat is refused: the claim's clock and the
 * provider's are not the same, and the first call can come a little after the claim.
 *
 * @example
 * ```ts
 * const refusedAfterSeconds = DEFAULT_PROVIDER_KEY_WINDOW_SECONDS - PROVIDER_KEY_WINDOW_MARGIN_SECONDS; // 23 h
 * ```
 */
export const PROVIDER_KEY_WINDOW_MARGIN_SECONDS = 3_600;

/**
 * A consumer whose spec names one ledger and whose handler builds the other: thrown at cold start, so the
 * mismatch never handles a message.
 *
 * @example
 * ```ts
 * // spec: { name: 'rooms', ledger: 'sequenced', ... }; handler: new DynamoDbEntityEffectLedger(...) throws
 * new LedgerMismatchError('rooms', 'sequenced', 'an inbox');
 * ```
 */
export class LedgerMismatchError extends Error {
  constructor(consumer: string, named: 'inbox' | 'sequenced', built: string) {
    super(
      `Consumer ${consumer}: its spec names the ${named} ledger but its handler builds ${built} ledger; change the spec's ledger and the handler's ledger together`,
    );
    this.name = 'LedgerMismatchError';
  }
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
 *
 * @example A ledger: each method runs its effect under the claim
 * ```ts
 * import { InboxLedger, type LedgerResult, type RecordWork } from '..';
 *
 * export class DynamoDbLoyaltyLedger extends InboxLedger implements LoyaltyLedger {
 *   async credit(event: OrderPlacedEvent, points: number, work?: RecordWork): Promise<LedgerResult> {
 *     return this.transact(event, [this.pointsUpdate(event.payload.customerId, points)], work);
 *   }
 * }
 * ```
 */
export abstract class InboxLedger {
  protected readonly now: () => Date;

  /** Whose inbox this is: the spec's name, from the wiring, never written here. */
  readonly consumer: string;

  constructor(
    protected readonly client: DynamoDBDocumentClient,
    protected readonly options: LedgerOptions,
  ) {
    if (options.ledger === 'sequenced') throw new LedgerMismatchError(options.consumer, 'sequenced', 'an inbox');
    this.consumer = options.consumer;
    this.now = options.now ?? (() => new Date());
  }

  /**
   * The claim; with `work`, it also takes the lease on the provider call that
   * follows the commit, so a concurrent copy of the event finds the call leased
   * at no extra write. It stores the fingerprint of what was sent (the record's body, never the
   * consumer's parse: inbox/fingerprint.ts), so a later claim on the same id can tell a duplicate
   * from another event, and it expires `inboxTtlSeconds`
   * after the later of now and the event's occurredAt (the horizon counts from there).
   */
  protected claim(event: EventEnvelope, work: RecordWork | undefined): TransactItem {
    const now = this.now();
    const { written, providerKey } = claimKeys(this.consumer, event, this.options.keys);
    return {
      Put: {
        TableName: this.options.tableName,
        Item: {
          ...written,
          // The key the call is owed under: a duplicate handled by another release sends under it too.
          [PROVIDER_KEY_ATTRIBUTE]: providerKey,
          consumer: this.consumer,
          eventId: event.eventId,
          ...(event.tenant === undefined ? {} : { tenant: event.tenant }),
          [FINGERPRINT_ATTRIBUTE]: sentFingerprintOf(event, work),
          claimedAt: now.toISOString(),
          [INBOX_TTL_ATTRIBUTE]: claimExpiresAt(now, event.occurredAt, this.options.inboxTtlSeconds),
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
    };
  }

  /**
   * After the provider accepted the call: a duplicate from now on leaves the
   * provider alone, however late it comes. Conditioned on the entry existing, so
   * it never creates an entry without its TTL.
   */
  async recordProviderCallDone(event: EventRef, work?: RecordWork): Promise<void> {
    await this.updateInboxEntry(event, work, {
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
  async leaseProviderCall(event: EventRef, work: RecordWork): Promise<ProviderCallLease> {
    try {
      await this.updateInboxEntry(event, work, {
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
  async releaseProviderCallLease(event: EventRef, work: RecordWork): Promise<void> {
    try {
      await this.updateInboxEntry(event, work, {
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

  /**
   * Marks `event`'s inbox entry superseded by `by` on its own (outside a transaction), creating it with its
   * TTL if absent: for an event found stale, whose transaction was cancelled, so that it is recorded as
   * judged (a later copy is stale, owing no call) rather than leaving no trace. A mark already there is
   * kept. The entry names `by`'s entity and version, so a later claim on it is stale only for an event of
   * that entity at or below that version (the stale event's version may equal its entity's last: `<=`),
   * and EventIdReused for any other event under the id. Only the written shape's key: a claim of this event
   * under another shape would have failed the claim's transaction as a duplicate before its effect did.
   */
  protected async markSuperseded(event: EventRef, by: SupersedingEvent, work: RecordWork | undefined): Promise<void> {
    await this.updateInboxEntry(event, work, supersedeMark(event, by, this.options.inboxTtlSeconds, this.now(), true));
  }

  /** One UpdateItem on this consumer's inbox entry for `event`, with the work's signal, retried on contention. */
  private updateInboxEntry(
    event: EventRef,
    work: RecordWork | undefined,
    update: Omit<UpdateCommandInput, 'TableName' | 'Key'>,
  ): Promise<unknown> {
    // Where the claim lives: a duplicate of an earlier release's claim names that entry (LedgerResult.claim).
    const Key =
      event.claim === undefined
        ? claimKeys(this.consumer, event, this.options.keys).written
        : { pk: event.claim.inboxPk, sk: 'INBOX' };
    const input = { TableName: this.options.tableName, Key, ...update };
    return this.withRetries(() => this.client.send(new UpdateCommand(input), { abortSignal: work?.signal }), work);
  }

  /** One write, retried on contention in-process (options.contention), never past the record's deadline. */
  protected withRetries<T>(write: () => Promise<T>, work: RecordWork | undefined): Promise<T> {
    return this.options.contention === undefined
      ? write()
      : withContentionRetries(write, this.options.contention, work?.signal);
  }

  /**
   * Transaction items marking an earlier event's inbox entry superseded by `by`: a duplicate of that
   * earlier event must not reach the provider after this one did. One item per key shape the ledger
   * finds claims under (its `keys` option), since the earlier event may have been claimed by another
   * release under another shape, and a copy of it handled by any release must find the mark: each
   * costs a write. Creates an entry (with its TTL) where none is, which then stands for "done,
   * superseded" too, bound to `by`'s entity and version (see markSuperseded).
   */
  protected supersede(earlier: EventRef, by: SupersedingEvent): TransactItem[] {
    const { written, elsewhere } = claimKeys(this.consumer, earlier, this.options.keys);
    const mark = supersedeMark(earlier, by, this.options.inboxTtlSeconds, this.now(), false);
    return [written, ...elsewhere].map((Key) => ({ Update: { TableName: this.options.tableName, Key, ...mark } }));
  }

  /**
   * Whether the entry in `item` has owed its call for longer than the provider's key window, less the
   * margin: counted from the claim, or from when a person found the call not performed (the DLQ tool).
   */
  private pastProviderKeyWindow(entry: Record<string, unknown>): boolean {
    const from = Date.parse(String(entry[PROVIDER_KEY_WINDOW_FROM_ATTRIBUTE] ?? entry.claimedAt));
    if (Number.isNaN(from)) return false;
    const windowSeconds = this.options.providerKeyWindowSeconds ?? DEFAULT_PROVIDER_KEY_WINDOW_SECONDS;
    return this.now().getTime() - from > (windowSeconds - PROVIDER_KEY_WINDOW_MARGIN_SECONDS) * 1000;
  }

  /**
   * Runs claim + effect. Resolves 'applied' (tallied on `work` for its metrics), or 'duplicate' when
   * the claim's condition failed on an entry for the same event (its stored fingerprint equals what
   * was sent this time, or it has none or one of an older version), with whether the provider call is
   * still owed, from the entry the cancellation returned. The claim's condition is read first, so a
   * duplicate whose effect items are also refused is still the duplicate it is. Throws every other
   * error: an entry for another event under this id is EventIdReused (a PermanentError with both
   * fingerprints), an invalid write is WriteRejected, and an effect condition failure is
   * {@link EffectConditionFailed}.
   *
   * The transaction carries a ClientRequestToken derived from this try and its items, kept across
   * retries until a definite cancellation (transaction-token.ts), so a retry of a send whose outcome
   * was unknown (a lost answer, TransactionInProgressException) succeeds as the commit it was, instead
   * of failing on its own claim and being counted a duplicate. A failed claim whose lease holder is
   * this try's own is that commit too, and is reported 'applied'.
   */
  protected async transact(event: EventEnvelope, effect: TransactItem[], work?: RecordWork): Promise<LedgerResult> {
    const { written, elsewhere, providerKey } = claimKeys(this.consumer, event, this.options.keys);
    return this.transactWith(event, effect, work, { written, elsewhere, providerKey });
  }

  /**
   * transact, with the claim written under `keys.written` and checked absent under each of `keys.elsewhere`
   * (the key shapes an earlier or later release claims under) in the same transaction: an entry under any of
   * them is this event's claim, read exactly like a failed claim, and the lease and done-mark then act on it.
   */
  private async transactWith(
    event: EventEnvelope,
    effect: TransactItem[],
    work: RecordWork | undefined,
    keys: { written: InboxEntryKey; elsewhere: InboxEntryKey[]; providerKey: string },
  ): Promise<LedgerResult> {
    // The claim first, then one check per other key shape: a cancellation's reasons[0] is the claim's,
    // reasons[1..checks] the checks', and effect i's is reasons[i + 1 + checks].
    const inbox: TransactItem[] = [
      this.claim(event, work),
      ...keys.elsewhere.map((key) => claimedElsewhere(this.options.tableName, key)),
    ];
    const items = [...inbox, ...effect];
    const holder = work?.leaseHolder ?? `untimed:${randomUUID()}`;
    // One token until a definite cancellation (transaction-token.ts); the SDK's own retries within one
    // send reuse the command, and so its token.
    const send = transactionSender(this.client, items, holder, work?.signal);
    try {
      await this.withRetries(send, work);
      return { ...this.committed(work), claim: { inboxPk: keys.written.pk, providerKey: keys.providerKey } };
    } catch (error) {
      if (!(error instanceof TransactionCanceledException)) throw this.classified(event, error);
      const reasons = error.CancellationReasons ?? [];
      // The claim's condition first: a duplicate is the duplicate it is, whatever else the same
      // cancellation says of its effect items (a ValidationError there would fail the same way again).
      // Where the event is found: a claim before a supersede mark (a mark created under this release's key
      // stands beside the claim an older release wrote under its own), then the first shape that has an entry.
      const failed = reasons.slice(0, inbox.length).map((r) => r.Code === 'ConditionalCheckFailed');
      const claimed = reasons.findIndex((r, i) => failed[i] && r.Item?.claimedAt !== undefined);
      const found = claimed >= 0 ? claimed : failed.indexOf(true);
      if (found >= 0) {
        const at = found === 0 ? keys.written : keys.elsewhere[found - 1];
        const item = reasons[found].Item;
        const entry = item === undefined ? undefined : unmarshall(item);
        // No entry back (ALL_OLD not honoured): the call is repeated under its key, as providerCallPending says.
        if (entry === undefined)
          return {
            outcome: 'duplicate',
            providerCallPending: true,
            claim: {
              inboxPk: at.pk,
              providerKey: found === 0 ? keys.providerKey : owedProviderKey(this.consumer, event, {}),
            },
          };
        // This try's own commit, its answer lost (the claim's lease holder is unique per try and receipt).
        if (work !== undefined && entry[PROVIDER_CALL_LEASE_HOLDER_ATTRIBUTE] === work.leaseHolder)
          return {
            ...this.committed(work),
            providerCallPending: callStillOwed(entry),
            claim: { inboxPk: at.pk, providerKey: owedProviderKey(this.consumer, event, entry) },
          };
        // An older shape's key without the tenant, held by another tenant's event: no claim of this one.
        if (found > 0 && belongsToAnotherTenant(entry, event))
          return this.transactWith(event, effect, work, { ...keys, elsewhere: keys.elsewhere.filter((k) => k !== at) });
        const mark = supersedeMarkVerdict(event, entry);
        if (mark === 'stale') return STALE;
        if (mark === 'reused') throw this.idTakenBySupersedeMark(event, entry);
        this.refuseAnotherEvent(event, entry, work);
        const claim = { inboxPk: at.pk, providerKey: owedProviderKey(this.consumer, event, entry) };
        if (!callStillOwed(entry)) return { outcome: 'duplicate', providerCallPending: false, claim };
        return this.pastProviderKeyWindow(entry)
          ? { outcome: 'duplicate', providerCallPending: true, providerKeyWindowPassed: true, claim }
          : { outcome: 'duplicate', providerCallPending: true, claim };
      }
      if (isInvalidRequest(error)) throw this.classified(event, error);
      const failedIndex = reasons.findIndex((r) => r.Code === 'ConditionalCheckFailed');
      if (failedIndex >= 0 && reasons.every((r) => r.Code === 'None' || r.Code === 'ConditionalCheckFailed')) {
        const item = reasons[failedIndex].Item;
        throw new EffectConditionFailed(failedIndex - inbox.length, item === undefined ? undefined : unmarshall(item));
      }
      throw error;
    }
  }

  /** The claim and effect committed in this try: tallied for its metrics (EffectApplied), once. */
  private committed(work: RecordWork | undefined): LedgerResult {
    if (work?.tally !== undefined) work.tally.committed = true;
    return { outcome: 'applied', providerCallPending: true };
  }

  /** An error that is not the claim's: a request DynamoDB refuses as invalid is WriteRejected (permanent), the rest as it is. */
  private classified(event: EventEnvelope, error: unknown): unknown {
    return isInvalidRequest(error)
      ? new PermanentError(
          'WriteRejected',
          `DynamoDB refused ${this.consumer}'s write for ${event.eventId} as invalid: ${(error as Error).message}`,
        )
      : error;
  }

  /**
   * A claim failed on an entry a supersede mark created for another event (another entity, or a newer
   * version of it) under this id: taking it for a duplicate would lose this event without a trace.
   */
  private idTakenBySupersedeMark(event: EventEnvelope, entry: Record<string, unknown>): PermanentError {
    metrics.addMetric('EventIdReused', MetricUnit.Count, 1);
    return new PermanentError(
      'EventIdReused',
      `${this.consumer} marked the id ${event.eventId} superseded by ${String(entry[SUPERSEDED_BY_ATTRIBUTE])} ` +
        `(${String(entry[SUPERSEDED_BY_ENTITY_ATTRIBUTE])} v${String(entry[SUPERSEDED_BY_VERSION_ATTRIBUTE])}), ` +
        `which this ${event.type} of ${event.entityId} v${event.version} is not older than: ` +
        'another event under the id, neither applied nor acknowledged as a duplicate; compare the two and decide',
      {
        supersededBy: String(entry[SUPERSEDED_BY_ATTRIBUTE]),
        supersededByEntityId: String(entry[SUPERSEDED_BY_ENTITY_ATTRIBUTE]),
        supersededByVersion: String(entry[SUPERSEDED_BY_VERSION_ATTRIBUTE]),
      },
    );
  }

  /**
   * A failed claim means "already done" only for the same event. An entry stored with another
   * fingerprint of this version holds a different event under this id (reused by a producer, or
   * forged): it is never acknowledged as a duplicate, which would lose this event without a trace.
   * An entry without a fingerprint (claimed before fingerprints were stored, or created by a
   * supersede mark) or with one of an older version (which hashed a consumer's parse, so a schema
   * change would read as a mismatch) is taken as the same event.
   */
  private refuseAnotherEvent(event: EventEnvelope, entry: Record<string, unknown>, work: RecordWork | undefined): void {
    const stored = entry[FINGERPRINT_ATTRIBUTE];
    const delivered = sentFingerprintOf(event, work);
    if (!fingerprintsDiffer(stored, delivered)) return;
    metrics.addMetric('EventIdReused', MetricUnit.Count, 1);
    throw new PermanentError(
      'EventIdReused',
      `${this.consumer} already applied another event under the id ${event.eventId} (claimed at ${String(entry.claimedAt)}): ` +
        `this ${event.type} of ${event.entityId} v${event.version} was sent with other content (its message body differs ` +
        'in more than occurredAt and traceparent), so it is neither applied nor acknowledged as a duplicate; compare the two and decide',
      { storedFingerprint: String(stored), deliveredFingerprint: delivered },
    );
  }
}

/**
 * The fingerprint of what was sent for `event`: the record's body, fingerprinted once by consumeRecord
 * (never the consumer's parse of it); without a record (a ledger called directly), the envelope given.
 */
function sentFingerprintOf(event: EventEnvelope, work: RecordWork | undefined): string {
  return work?.sentFingerprint ?? eventFingerprint(event);
}

/**
 * Whether a duplicate still owes the provider its call, from the inbox entry
 * the failed claim returned. An entry that did not come back (ALL_OLD not
 * honoured) counts as pending: the call is repeated under its key, as before
 * completion was recorded.
 */
export function providerCallPending(item: Parameters<typeof unmarshall>[0] | undefined): boolean {
  return item === undefined || callStillOwed(unmarshall(item));
}

/** An inbox entry (unmarshalled) whose call is neither recorded done nor superseded. */
function callStillOwed(entry: Record<string, unknown>): boolean {
  return entry[PROVIDER_CALL_DONE_ATTRIBUTE] === undefined && entry[SUPERSEDED_BY_ATTRIBUTE] === undefined;
}

/**
 * The result of an event a newer one of the same entity already overtook: no effect, no provider call.
 *
 * @example A ledger whose state guard refused the effect (test/exactly-once/fixtures/probe-ledger.ts)
 * ```ts
 * if (error instanceof EffectConditionFailed && error.effectIndex === 0) return STALE;
 * ```
 */
export const STALE: LedgerResult = { outcome: 'stale', providerCallPending: false };

/**
 * An effect's own condition failed (not the claim): carries which effect item and its old image.
 * `effectIndex` counts the effect items only (0 is the first effect), whatever the claim adds before them.
 *
 * @example An undo: state 1 -> 2 is its first effect item (test/exactly-once/fixtures/probe-ledger.ts)
 * ```ts
 * try {
 *   return await this.transact(event, [undoState, tallyDelta, ...this.supersede(happened, event)], work);
 * } catch (error) {
 *   if (!(error instanceof EffectConditionFailed) || error.effectIndex !== 0) throw error;
 *   if (error.oldItem !== undefined) return STALE; // already undone
 *   return this.transact(event, [this.firstState(event.entityId, 2, 'UNDONE_FIRST')], work); // the undo came first
 * }
 * ```
 */
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
 * The event that supersedes an earlier one: its id, and the entity and version a supersede mark binds.
 *
 * @example An undo supersedes its entity's earlier event (test/exactly-once/fixtures/probe-ledger.ts)
 * ```ts
 * ...this.supersede({ eventId: `${event.entityId}:happened`, tenant: event.tenant }, event),
 * ```
 */
export type SupersedingEvent = Pick<EventEnvelope, 'eventId' | 'entityId' | 'version'>;

/**
 * The update that marks an entry superseded by `by` and binds the mark to `by`'s entity and version,
 * giving it its TTL and its tenant when it creates it. `keep`: a mark already there is kept (a stale
 * event's own mark), otherwise `by` replaces it (a newer event supersedes).
 */
function supersedeMark(earlier: EventRef, by: SupersedingEvent, ttlSeconds: number, now: Date, keep: boolean) {
  const set = (name: string, value: string) =>
    keep ? `${name} = if_not_exists(${name}, ${value})` : `${name} = ${value}`;
  return {
    UpdateExpression:
      `SET ${set('#superseded', ':by')}, ${set('#entity', ':entity')}, ${set('#version', ':version')}, ` +
      `#ttl = if_not_exists(#ttl, :expires)${earlier.tenant === undefined ? '' : ', #tenant = if_not_exists(#tenant, :tenant)'}`,
    ExpressionAttributeNames: {
      '#superseded': SUPERSEDED_BY_ATTRIBUTE,
      '#entity': SUPERSEDED_BY_ENTITY_ATTRIBUTE,
      '#version': SUPERSEDED_BY_VERSION_ATTRIBUTE,
      '#ttl': INBOX_TTL_ATTRIBUTE,
      ...(earlier.tenant === undefined ? {} : { '#tenant': 'tenant' }),
    },
    ExpressionAttributeValues: {
      ':by': by.eventId,
      ':entity': by.entityId,
      ':version': by.version,
      ':expires': expiresAfter(now, ttlSeconds),
      ...(earlier.tenant === undefined ? {} : { ':tenant': earlier.tenant }),
    },
  };
}
