import { randomUUID } from 'node:crypto';
import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand, type DynamoDBDocumentClient, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { RecordWork } from '../consumer/record-work';
import { LedgerMismatchError } from './inbox-ledger';
import type { EventEnvelope } from '../envelope';
import { PermanentError } from '../errors';
import { eventFingerprint, fingerprintsDiffer } from '../inbox/fingerprint';
import { providerKey } from '../inbox/keys';
import type { EventRef, LedgerResult, ProviderCallLease, ProviderCallRecord } from '../inbox/ports';
import { withContentionRetries, type InProcessRetry } from '../runtime/contention-retry';
import { logger, metrics, MetricUnit } from '../runtime/observability';
import {
  DEFAULT_PROVIDER_KEY_WINDOW_SECONDS,
  EffectConditionFailed,
  PROVIDER_KEY_WINDOW_MARGIN_SECONDS,
  STALE,
  type TransactItem,
} from './inbox-ledger';
import { transactionSender } from './transaction-token';
import { isInvalidRequest } from './transient-errors';
import { PROVIDER_KEY_WINDOW_FROM_ATTRIBUTE } from './inbox-table';
import { SEQUENCE_ATTRIBUTES } from './sequenced-table';

export { SEQUENCE_ATTRIBUTES } from './sequenced-table';

/**
 * The attribute that holds an owed provider call on the entity item: `owedCall` for a ledger whose newer
 * event supersedes the owed call of an older one (one slot, overwritten), `owedCall#<eventId>` otherwise
 * (one per event whose call is owed, removed by its done-mark). Its value is a map: the event's id,
 * version and fingerprint, the provider key the call is owed under and when it was claimed. The call's
 * lease is two top-level attributes beside it, `<slot>:leaseUntil` and `<slot>:leaseHolder`, so the
 * lease's condition reads top-level attributes only.
 *
 * @example
 * ```ts
 * owedCallAttribute(false, 'evt-1'); // 'owedCall#evt-1'
 * owedCallAttribute(true, 'evt-1'); // 'owedCall'
 * ```
 */
export function owedCallAttribute(newerSupersedes: boolean, eventId: string): string {
  return newerSupersedes ? 'owedCall' : `owedCall#${eventId}`;
}

/**
 * Beside an owed call's slot: when a person (the DLQ tool) found at the provider that the call was NOT
 * performed, so its key window counts from then instead of from the claim (inbox-table.ts
 * PROVIDER_KEY_WINDOW_FROM_ATTRIBUTE, for the inbox).
 *
 * @example
 * ```ts
 * owedCallWindowFromAttribute('owedCall#evt-1'); // 'owedCall#evt-1:providerKeyWindowFrom'
 * ```
 */
export const owedCallWindowFromAttribute = (slot: string): string => `${slot}:${PROVIDER_KEY_WINDOW_FROM_ATTRIBUTE}`;

/** What a refused claim is judged with, beside the event and the old item. */
interface Judged {
  fingerprint: string;
  work: RecordWork | undefined;
  inboxPk: string;
  /** Whether the effect added a condition of its own (EntityUpdate.condition). */
  conditioned: boolean;
}

/** An owed call as stored on the entity item (owedCallAttribute). */
interface OwedCall {
  eventId: string;
  version: number;
  fingerprint: string;
  providerKey: string;
  claimedAt: string;
}

/**
 * What a SequencedLedger is built with. A consumer's wiring's `ledgerOptions` fit (their inbox TTL and
 * key shapes are not used: the claim lives on the entity item and never expires).
 *
 * @example
 * ```ts
 * const ledger = new DynamoDbSequencedEntityEffectLedger(wiring.documents, wiring.ledgerOptions);
 * ```
 */
export interface SequencedLedgerOptions {
  /** The consumer's spec name: the prefix of its entity items and of its provider keys. */
  consumer: string;
  /** The effects table the entity items live in. */
  tableName: string;
  /**
   * How long the provider remembers an idempotency key: a call owed longer than this minus the margin
   * since its claim is refused with ProviderKeyWindowPassed instead of repeated (aws/inbox-ledger.ts).
   * @default DEFAULT_PROVIDER_KEY_WINDOW_SECONDS (24 h)
   */
  providerKeyWindowSeconds?: number;
  /**
   * The clock of the claims and the leases.
   * @default () => new Date()
   */
  now?: () => Date;
  /**
   * How a write is retried on contention inside the invocation.
   * @default - not retried here (the queue's backoff retries it)
   */
  contention?: InProcessRetry;
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
 * One conditional update's parts that an effect adds to the claim's UpdateItem, with placeholders of its
 * own: `#sq_*` and `:sq_*` are the ledger's, and the item's attributes SEQUENCE_ATTRIBUTES and `owedCall*`.
 *
 * @example The generic effect's count
 * ```ts
 * const effect: EntityUpdate = { set: ['lastEventId = :eventId'], add: ['appliedCount :one'], values: { ':eventId': event.eventId, ':one': 1 } };
 * ```
 */
export interface EntityUpdate {
  /** `SET` actions, e.g. `'lastEventId = :eventId'`. */
  set?: readonly string[];
  /** `ADD` actions, e.g. `'appliedCount :one'`. */
  add?: readonly string[];
  /** `REMOVE` actions. */
  remove?: readonly string[];
  /**
   * The effect's own condition on the entity item, ANDed with the sequence condition (its names and values
   * in `names` and `values`). A refusal the sequence does not explain (the item older than the event and
   * not its claim) is then the effect's: {@link EntityConditionFailed}, with the item as it was.
   * @default none
   */
  condition?: string;
  names?: Readonly<Record<string, string>>;
  values?: Readonly<Record<string, unknown>>;
}

/**
 * The effect's own condition on the entity item (EntityUpdate.condition) refused the claim's update, and
 * the sequence did not: nothing was written. `oldItem` is the item as it was, undefined where there was none.
 *
 * @example Fulfilment's cancel releases stock only where the order's place was applied
 * ```ts
 * try {
 *   return await this.claimOnEntity(event, pk, { ...released, condition: 'attribute_exists(#reserved)' }, work, stockDeltas);
 * } catch (error) {
 *   if (!(error instanceof EntityConditionFailed)) throw error;
 *   return this.claimOnEntity(event, pk, cancelledUnreserved, work); // the cancel overtook the place
 * }
 * ```
 */
export class EntityConditionFailed extends Error {
  constructor(readonly oldItem: Record<string, unknown> | undefined) {
    super("The effect's condition on the entity item failed");
    this.name = 'EntityConditionFailed';
  }
}

/** The escaping of inbox/keys.ts: `#` and `%` of an id percent-escaped, so no two entities share a key. */
const escapeId = (id: string): string => id.replace(/[%#]/g, (c) => (c === '%' ? '%25' : '%23'));

/**
 * The key of a consumer's item for an event's entity in a sequenced ledger: `EFFECT#<consumer>#<entityId>`
 * (sort key `EFFECT`), with the event's verified tenant `EFFECT#<consumer>#<tenant>#<entityId>` (tenant
 * URI-encoded, entityId's `#` and `%` escaped): two tenants' entities under one id are two items, two
 * sequences. An entity without a tenant and without `#` or `%` in its id keeps the generic effect's key.
 *
 * @example
 * ```ts
 * sequencedEntityKey('audit', { entityId: 'order-1' }); // { pk: 'EFFECT#audit#order-1', sk: 'EFFECT' }
 * ```
 */
export function sequencedEntityKey(
  consumer: string,
  event: Pick<EventEnvelope, 'entityId' | 'tenant'>,
): { pk: string; sk: string } {
  const entity = escapeId(event.entityId);
  const pk =
    event.tenant === undefined
      ? `EFFECT#${consumer}#${entity}`
      : `EFFECT#${consumer}#${encodeURIComponent(event.tenant)}#${entity}`;
  return { pk, sk: 'EFFECT' };
}

/**
 * The sequenced ledger: for an effect on the event's own entity item, the claim lives on that item,
 * guarded by the entity's version, and the claim and the effect are ONE conditional UpdateItem (no
 * inbox item, no transaction): `(attribute_not_exists(seq) OR seq < :v) AND seqEventId <> :id` (plus,
 * where every call is owed, no owed call of this id). The update stores the event's version, id and
 * fingerprint and the provider call it owes (with this try's lease on it). A refused update returns the
 * item as it was (ReturnValuesOnConditionCheckFailure ALL_OLD), and the refusal is judged from it in the
 * same round trip:
 * - the event's owed call is on the item: a duplicate that owes the call (fingerprint equal), or
 *   EventIdReused (fingerprint differs); its lease holder being this try's own is this try's commit,
 *   its answer lost: applied;
 * - `seq == v` with the event's id and fingerprint: a duplicate, its call done ("already done": the only
 *   refusal that means it); the same id with another fingerprint: EventIdReused; another id:
 *   VersionReused (a producer gave one version of the entity to two events);
 * - the same id at another version: EventIdReused;
 * - `seq > v`: stale, an older version a newer one already superseded: acknowledged without effect or
 *   call (StaleEventIgnored, and a log line naming the entity's last event).
 * A claim on the entity never expires, so a consumer on this ledger needs no dedupe horizon of its own.
 * `newerSupersedes`: a newer event's claim overwrites the owed call of an older one (fulfilment: a cancel
 * supersedes the PICK it cancels); otherwise every event's call stays owed until its done-mark.
 *
 * @example The generic effect on it (aws/sequenced-entity-effect-ledger.ts)
 * ```ts
 * export class DynamoDbSequencedEntityEffectLedger extends SequencedLedger implements EntityEffectLedger {
 *   apply(event: EventEnvelope, work?: RecordWork): Promise<LedgerResult> {
 *     return this.claimOnEntity(event, sequencedEntityKey(this.consumer, event).pk, {
 *       add: ['appliedCount :one'],
 *       values: { ':one': 1 },
 *     }, work);
 *   }
 * }
 * ```
 */
export abstract class SequencedLedger implements ProviderCallRecord {
  /** Whose ledger this is: the spec's name. */
  readonly consumer: string;
  /** The sort key of the entity items this ledger claims on: one per ledger, so a claim's pk names its item. */
  protected readonly sortKey: string = 'EFFECT';
  protected readonly now: () => Date;

  constructor(
    protected readonly client: DynamoDBDocumentClient,
    protected readonly options: SequencedLedgerOptions,
    /** Whether a newer event's claim supersedes the call an older one still owes (see the class). */
    protected readonly newerSupersedes = false,
  ) {
    if (options.ledger === 'inbox') throw new LedgerMismatchError(options.consumer, 'inbox', 'a sequenced');
    this.consumer = options.consumer;
    this.now = options.now ?? (() => new Date());
  }

  /**
   * The claim and `effect` in one conditional UpdateItem on the entity item `pk` (sort key {@link sortKey}), judged from the old
   * item on a refusal (see the class). The proof kit (packages/tools/src/proof-kit/sequenced-claims.ts) and the
   * DLQ tool look for a consumer's claims at `sequencedEntityKey(consumer, event)`: a ledger that claims on
   * another item is one they cannot judge. Resolves applied, duplicate (with whether the call is still owed)
   * or stale; throws EventIdReused, VersionReused (PermanentErrors), WriteRejected for a write DynamoDB
   * refuses as invalid, and every other error as it is.
   *
   * `alsoWrite`: writes to other items that must commit with the claim (fulfilment's stock per SKU): then
   * the claim's update and they are one TransactWriteItems under a ClientRequestToken (transaction-token.ts),
   * the claim first, so its refusal is read from the cancellation's first reason, exactly as above; another
   * item's failed condition is {@link EffectConditionFailed} (its index in `alsoWrite`). Each transactional
   * item is billed 2 write units: still one item fewer than the transactional inbox, which adds its claim.
   */
  protected async claimOnEntity(
    event: EventEnvelope,
    pk: string,
    effect: EntityUpdate,
    work?: RecordWork,
    alsoWrite: readonly TransactItem[] = [],
  ): Promise<LedgerResult> {
    const key = { pk, sk: this.sortKey };
    const fingerprint = work?.sentFingerprint ?? eventFingerprint(event);
    const slot = owedCallAttribute(this.newerSupersedes, event.eventId);
    const call: OwedCall = {
      eventId: event.eventId,
      version: event.version,
      fingerprint,
      providerKey: providerKey(this.consumer, event),
      claimedAt: this.now().toISOString(),
    };
    const set = [
      '#sq_seq = :sq_v',
      '#sq_event = :sq_id',
      '#sq_fp = :sq_fp',
      '#sq_at = :sq_at',
      '#sq_call = :sq_call',
      ...(work === undefined ? [] : ['#sq_lease = :sq_until', '#sq_holder = :sq_me']),
      ...(effect.set ?? []),
    ];
    // A superseded call's lease and window must not stay beside the newer call that took its slot.
    const remove = [
      ...(work === undefined && this.newerSupersedes ? ['#sq_lease', '#sq_holder'] : []),
      ...(this.newerSupersedes ? ['#sq_from'] : []),
      ...(effect.remove ?? []),
    ];
    // The count of claims made on the item: the proof kit's evidence that no event was applied twice.
    const add = ['#sq_claims :sq_one', ...(effect.add ?? [])];
    const usesLease = work !== undefined || this.newerSupersedes;
    const input: UpdateCommandInput = {
      TableName: this.options.tableName,
      Key: key,
      UpdateExpression: [
        `SET ${set.join(', ')}`,
        `ADD ${add.join(', ')}`,
        ...(remove.length === 0 ? [] : [`REMOVE ${remove.join(', ')}`]),
      ].join(' '),
      // The sequence condition: an entity's claims only move forward, and an id claimed last is not
      // claimed again at another version; where every call stays owed, an id whose call is owed neither.
      ConditionExpression:
        '(attribute_not_exists(#sq_seq) OR #sq_seq < :sq_v) AND (attribute_not_exists(#sq_event) OR #sq_event <> :sq_id)' +
        (this.newerSupersedes ? '' : ' AND attribute_not_exists(#sq_call)') +
        (effect.condition === undefined ? '' : ` AND (${effect.condition})`),
      ExpressionAttributeNames: {
        '#sq_seq': SEQUENCE_ATTRIBUTES.seq,
        '#sq_event': SEQUENCE_ATTRIBUTES.eventId,
        '#sq_fp': SEQUENCE_ATTRIBUTES.fingerprint,
        '#sq_at': SEQUENCE_ATTRIBUTES.claimedAt,
        '#sq_call': slot,
        '#sq_claims': SEQUENCE_ATTRIBUTES.claims,
        ...(usesLease ? { '#sq_lease': `${slot}:leaseUntil`, '#sq_holder': `${slot}:leaseHolder` } : {}),
        ...(this.newerSupersedes ? { '#sq_from': owedCallWindowFromAttribute(slot) } : {}),
        ...effect.names,
      },
      ExpressionAttributeValues: {
        ':sq_v': event.version,
        ':sq_id': event.eventId,
        ':sq_fp': fingerprint,
        ':sq_at': call.claimedAt,
        ':sq_call': call,
        ':sq_one': 1,
        ...(work === undefined ? {} : { ':sq_until': work.leaseUntil, ':sq_me': work.leaseHolder }),
        ...effect.values,
      },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    };
    const claim = { inboxPk: key.pk, providerKey: call.providerKey };
    const judged = { fingerprint, work, inboxPk: claim.inboxPk, conditioned: effect.condition !== undefined };
    if (alsoWrite.length > 0) return this.transactOnEntity(event, input, alsoWrite, judged, claim);
    try {
      await this.withRetries(() => this.client.send(new UpdateCommand(input), { abortSignal: work?.signal }), work);
      return { ...this.committed(work), claim };
    } catch (error) {
      if (isInvalidRequest(error)) throw this.writeRejected(event, error);
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      return this.judgeRefusal(event, error.Item, judged, error);
    }
  }

  /** claimOnEntity with other items: one transaction, the claim's update first. */
  private async transactOnEntity(
    event: EventEnvelope,
    update: UpdateCommandInput,
    alsoWrite: readonly TransactItem[],
    judged: Judged,
    claim: { inboxPk: string; providerKey: string },
  ): Promise<LedgerResult> {
    const items = [{ Update: update } as TransactItem, ...alsoWrite];
    const holder = judged.work?.leaseHolder ?? `untimed:${randomUUID()}`;
    const send = transactionSender(this.client, items, holder, judged.work?.signal);
    try {
      await this.withRetries(send, judged.work);
      return { ...this.committed(judged.work), claim };
    } catch (error) {
      if (!(error instanceof TransactionCanceledException)) {
        if (isInvalidRequest(error)) throw this.writeRejected(event, error);
        throw error;
      }
      const reasons = error.CancellationReasons ?? [];
      // The claim's reason first: a duplicate is the duplicate it is, whatever the other items' reasons say.
      if (reasons[0]?.Code === 'ConditionalCheckFailed')
        return this.judgeRefusal(event, reasons[0].Item, judged, error);
      if (isInvalidRequest(error)) throw this.writeRejected(event, error);
      const failed = reasons.findIndex((r) => r.Code === 'ConditionalCheckFailed');
      if (failed > 0 && reasons.every((r) => r.Code === 'None' || r.Code === 'ConditionalCheckFailed')) {
        const item = reasons[failed].Item;
        throw new EffectConditionFailed(failed - 1, item === undefined ? undefined : unmarshall(item));
      }
      throw error;
    }
  }

  private writeRejected(event: EventEnvelope, error: unknown): PermanentError {
    return new PermanentError(
      'WriteRejected',
      `DynamoDB refused ${this.consumer}'s write for ${event.eventId} as invalid: ${(error as Error).message}`,
    );
  }

  /**
   * A refused claim with the item it returned (marshalled). No item back: with an effect condition, the
   * item did not exist and that condition refused it; without one, the refusal cannot be judged and the
   * error is thrown as it is (tried again), never acknowledged blind.
   */
  private judgeRefusal(
    event: EventEnvelope,
    item: Parameters<typeof unmarshall>[0] | undefined,
    judged: Judged,
    error: unknown,
  ): LedgerResult {
    if (item === undefined) {
      if (judged.conditioned) throw new EntityConditionFailed(undefined);
      throw error;
    }
    return this.judge(event, judged.fingerprint, unmarshall(item), judged.work, judged.inboxPk, judged.conditioned);
  }

  /** A refused claim, judged from the item as it was (see the class). */
  private judge(
    event: EventEnvelope,
    fingerprint: string,
    old: Record<string, unknown>,
    work: RecordWork | undefined,
    inboxPk: string,
    conditioned = false,
  ): LedgerResult {
    const slot = owedCallAttribute(this.newerSupersedes, event.eventId);
    const stored = old[slot] as OwedCall | undefined;
    const owed = stored?.eventId === event.eventId ? stored : undefined;
    if (owed !== undefined) {
      if (fingerprintsDiffer(owed.fingerprint, fingerprint)) throw this.idReused(event, owed.fingerprint, fingerprint);
      const claim = { inboxPk, providerKey: owed.providerKey };
      // This try's own commit, its answer lost (the lease holder is unique per try and receipt).
      if (work !== undefined && old[`${slot}:leaseHolder`] === work.leaseHolder)
        return { ...this.committed(work), claim };
      return this.pastProviderKeyWindow(owed, old[owedCallWindowFromAttribute(slot)])
        ? { outcome: 'duplicate', providerCallPending: true, providerKeyWindowPassed: true, claim }
        : { outcome: 'duplicate', providerCallPending: true, claim };
    }
    const seq = old[SEQUENCE_ATTRIBUTES.seq];
    const lastId = old[SEQUENCE_ATTRIBUTES.eventId];
    if (lastId === event.eventId) {
      const storedFingerprint = old[SEQUENCE_ATTRIBUTES.fingerprint];
      if (seq === event.version && !fingerprintsDiffer(storedFingerprint, fingerprint))
        return {
          outcome: 'duplicate',
          providerCallPending: false,
          claim: { inboxPk, providerKey: providerKey(this.consumer, event) },
        };
      throw this.idReused(event, String(storedFingerprint), fingerprint);
    }
    if (seq === event.version) throw this.versionReused(event, old);
    if (typeof seq === 'number' && seq > event.version) return this.stale(event, old);
    // Newer than the item and not its claim: the sequence let it through, so the effect's condition refused it.
    if (conditioned) throw new EntityConditionFailed(old);
    // Refused, yet newer than the item and not its id: nothing above explains it. Never acknowledged blind.
    throw new Error(
      `${this.consumer}'s claim of ${event.eventId} on ${event.entityId} v${event.version} was refused by an item at seq ${String(seq)}`,
    );
  }

  /** An older version than the entity's last claim: acknowledged without effect or call, and said so. */
  private stale(event: EventEnvelope, old: Record<string, unknown>): LedgerResult {
    logger.info('Stale event acknowledged without effect: a newer version of its entity was applied', {
      consumer: this.consumer,
      eventId: event.eventId,
      entityId: event.entityId,
      version: event.version,
      entitySeq: old[SEQUENCE_ATTRIBUTES.seq],
      entityLastEventId: old[SEQUENCE_ATTRIBUTES.eventId],
    });
    return STALE;
  }

  private idReused(event: EventEnvelope, storedFingerprint: string, deliveredFingerprint: string): PermanentError {
    metrics.addMetric('EventIdReused', MetricUnit.Count, 1);
    return new PermanentError(
      'EventIdReused',
      `${this.consumer} already claimed another event under the id ${event.eventId} on ${event.entityId}: this ` +
        `${event.type} v${event.version} was sent with other content, so it is neither applied nor acknowledged as a duplicate; compare the two and decide`,
      { storedFingerprint, deliveredFingerprint },
    );
  }

  private versionReused(event: EventEnvelope, old: Record<string, unknown>): PermanentError {
    metrics.addMetric('VersionReused', MetricUnit.Count, 1);
    const other = String(old[SEQUENCE_ATTRIBUTES.eventId]);
    return new PermanentError(
      'VersionReused',
      `${this.consumer} already applied ${other} as v${event.version} of ${event.entityId}: this ${event.type} ` +
        `${event.eventId} claims the same version, so it is neither applied nor acknowledged as a duplicate; compare the two and decide`,
      { appliedEventId: other, appliedFingerprint: String(old[SEQUENCE_ATTRIBUTES.fingerprint]) },
    );
  }

  /**
   * Whether an owed call has been owed for longer than the provider's key window, less the margin, since
   * its claim or since a person found it not performed (`windowFrom`): its first call may have been
   * performed with the answer lost, and a repeat past the window would be a second effect.
   */
  private pastProviderKeyWindow(call: OwedCall, windowFrom: unknown): boolean {
    const from = Date.parse(typeof windowFrom === 'string' ? windowFrom : call.claimedAt);
    if (Number.isNaN(from)) return false;
    const windowSeconds = this.options.providerKeyWindowSeconds ?? DEFAULT_PROVIDER_KEY_WINDOW_SECONDS;
    return this.now().getTime() - from > (windowSeconds - PROVIDER_KEY_WINDOW_MARGIN_SECONDS) * 1000;
  }

  private committed(work: RecordWork | undefined): LedgerResult {
    if (work?.tally !== undefined) work.tally.committed = true;
    return { outcome: 'applied', providerCallPending: true };
  }

  /**
   * After the provider accepted the call: the owed call and its lease are removed from the entity item,
   * so a copy of the event from now on is a duplicate whose call is done (or stale, once a newer
   * version is claimed). Conditioned on the call still being this event's: a call already recorded, or
   * superseded by a newer event's, is left as it is.
   */
  async recordProviderCallDone(event: EventRef, work?: RecordWork): Promise<void> {
    const { slot, Key, eventIs, names } = this.callOf(event);
    try {
      await this.update(Key, work, {
        UpdateExpression: 'REMOVE #call, #lease, #holder, #from',
        ConditionExpression: `attribute_exists(#call)${eventIs}`,
        ExpressionAttributeNames: { ...names, '#from': owedCallWindowFromAttribute(slot) },
        ...(this.newerSupersedes ? { ExpressionAttributeValues: { ':id': event.eventId } } : {}),
      });
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      logger.info('Provider call already recorded or superseded on the entity item', { slot, eventId: event.eventId });
    }
  }

  /**
   * A duplicate that owes the call takes its lease: granted only while the call is still on the item
   * (and, where a newer event supersedes, still this event's) and no other try holds an unexpired lease.
   * 'done' when the call is gone (recorded or superseded), 'held' when another try holds it.
   */
  async leaseProviderCall(event: EventRef, work: RecordWork): Promise<ProviderCallLease> {
    const { Key, eventIs, names } = this.callOf(event);
    try {
      await this.update(Key, work, {
        UpdateExpression: 'SET #lease = :until, #holder = :me',
        ConditionExpression: `attribute_exists(#call)${eventIs} AND (attribute_not_exists(#lease) OR #lease < :now OR #holder = :me)`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: {
          ':until': work.leaseUntil,
          ':me': work.leaseHolder,
          ':now': this.now().getTime(),
          ...(this.newerSupersedes ? { ':id': event.eventId } : {}),
        },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      });
      return 'granted';
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const old = error.Item === undefined ? undefined : unmarshall(error.Item);
      const call = old?.[names['#call']] as OwedCall | undefined;
      return old !== undefined && call?.eventId !== event.eventId ? 'done' : 'held';
    }
  }

  /** Gives this try's lease back after its provider call failed; someone else's lease is left alone. */
  async releaseProviderCallLease(event: EventRef, work: RecordWork): Promise<void> {
    const { Key, names } = this.callOf(event);
    try {
      await this.update(Key, work, {
        UpdateExpression: 'REMOVE #lease, #holder',
        ConditionExpression: '#holder = :me',
        ExpressionAttributeNames: { '#lease': names['#lease'], '#holder': names['#holder'] },
        ExpressionAttributeValues: { ':me': work.leaseHolder },
      });
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  /** Where `event`'s owed call lives: the item its claim named, the slot, and the names of both. */
  private callOf(event: EventRef) {
    const pk = event.claim?.inboxPk ?? entityPkOf(this.consumer, event);
    const slot = owedCallAttribute(this.newerSupersedes, event.eventId);
    return {
      slot,
      Key: { pk, sk: this.sortKey },
      // A superseding slot may hold a newer event's call: act on it only while it is this event's.
      eventIs: this.newerSupersedes ? ' AND #last = :id' : '',
      names: {
        '#call': slot,
        '#lease': `${slot}:leaseUntil`,
        '#holder': `${slot}:leaseHolder`,
        ...(this.newerSupersedes ? { '#last': SEQUENCE_ATTRIBUTES.eventId } : {}),
      } as Record<string, string>,
    };
  }

  private update(
    Key: { pk: string; sk: string },
    work: RecordWork | undefined,
    update: Omit<UpdateCommandInput, 'TableName' | 'Key'>,
  ): Promise<unknown> {
    const input = { TableName: this.options.tableName, Key, ...update };
    return this.withRetries(() => this.client.send(new UpdateCommand(input), { abortSignal: work?.signal }), work);
  }

  private withRetries<T>(write: () => Promise<T>, work: RecordWork | undefined): Promise<T> {
    return this.options.contention === undefined
      ? write()
      : withContentionRetries(write, this.options.contention, work?.signal);
  }
}

/** The entity item's key of an event handed over without its claim: only an envelope says its entity. */
function entityPkOf(consumer: string, event: EventRef): string {
  const entityId = (event as Partial<EventEnvelope>).entityId;
  if (typeof entityId !== 'string')
    throw new Error(`${consumer}: the call of ${event.eventId} names no entity item (no claim, no entityId)`);
  return sequencedEntityKey(consumer, { entityId, tenant: event.tenant }).pk;
}
