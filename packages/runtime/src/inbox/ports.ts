import type { RecordWork } from '../consumer/record-work';
import type { EventEnvelope } from '../envelope';

/**
 * What names an event's inbox entry: its id and, when its producer verified one, its tenant
 * (the entry's key is `INBOX#<consumer>#<tenant>#<eventId>` then). Every envelope is one.
 *
 * @example
 * ```ts
 * const ref: EventRef = { eventId: orderPlacedEventId(orderId), tenant: event.tenant };
 * ```
 */
export type EventRef = Pick<EventEnvelope, 'eventId' | 'tenant'> & {
  /**
   * Where the event's claim was found (the ledger's answer, `LedgerResult.claim`): the lease and the
   * done-mark act on that entry, which may be under an older key shape than this release writes.
   * @default the key shape the ledger writes
   */
  claim?: ClaimRef;
};

/**
 * Where an event's claim lives and the provider key its call is owed under, as the ledger wrote or found
 * them: a claim written by an earlier release keeps its key shape and its provider key (inbox/keys.ts).
 *
 * @example What callProviderIfOwed does with a ledger's answer
 * ```ts
 * const claim: ClaimRef | undefined = result.claim;
 * await call(work.signal, claim?.providerKey ?? providerKey(record.consumer, event));
 * ```
 */
export interface ClaimRef {
  /** The partition key of the inbox entry that holds the claim. */
  inboxPk: string;
  /** The idempotency key the event's provider call is owed under. */
  providerKey: string;
}

/**
 * What applying an event did:
 * - applied: the inbox claim and the effect committed together, just now;
 * - duplicate: the inbox already held this consumer's claim on the eventId, so
 *   the effect happened before (the only outcome that means "already done");
 * - stale: a newer event for the same entity was applied first; nothing to do.
 *
 * @example What a use case resolves to
 * ```ts
 * const outcome: ApplyOutcome = await creditLoyaltyPoints(event, { ledger, mail }, work);
 * ```
 */
export type ApplyOutcome = 'applied' | 'duplicate' | 'stale';

/**
 * The outcome, and whether the external provider still has to hear of the
 * event. Read from the inbox entry itself (returned by the failed claim on a
 * duplicate), never with an extra read:
 * - applied: pending, the call comes right after the commit;
 * - duplicate: pending only if no earlier delivery recorded the call done and no
 *   later event of the same entity superseded this one (a redriven OrderPlaced
 *   must not send PICK after CANCEL_PICK);
 * - stale: never.
 *
 * @example What a ledger method resolves to, and callProviderIfOwed takes
 * ```ts
 * credit(event: OrderPlacedEvent, points: number, work?: RecordWork): Promise<LedgerResult>;
 * ```
 */
export interface LedgerResult {
  outcome: ApplyOutcome;
  providerCallPending: boolean;
  /**
   * A duplicate whose owed call has been owed since its claim, longer than the provider's key window:
   * callProviderIfOwed refuses to repeat it (ProviderKeyWindowPassed).
   * @default false
   */
  providerKeyWindowPassed?: boolean;
  /**
   * Where the claim lives and the key its call is owed under (an InboxLedger always says; a duplicate of a
   * claim written by an earlier release names that release's entry and key).
   * @default the current key shape's entry and key
   */
  claim?: ClaimRef;
}

/**
 * A duplicate's try for the lease on a provider call it owes: 'granted' (call
 * now), 'done' (done or superseded meanwhile: call nothing), 'held' (another
 * delivery holds a live lease: do not call now, retry later).
 * callProviderIfOwed takes the lease and acts on the answer; a use case need not.
 *
 * @example
 * ```ts
 * const lease: ProviderCallLease = await ledger.leaseProviderCall(event, work);
 * ```
 */
export type ProviderCallLease = 'granted' | 'done' | 'held';

/**
 * The inbox's record of a provider call, shared by every ledger. InboxLedger implements it;
 * an application's ledger port extends it, so its use case can hand the ledger to callProviderIfOwed.
 *
 * @example An application's loyalty ledger port
 * ```ts
 * import type { LedgerResult, ProviderCallRecord, RecordWork } from '..';
 *
 * export interface LoyaltyLedger extends ProviderCallRecord {
 *   credit(event: OrderPlacedEvent, points: number, work?: RecordWork): Promise<LedgerResult>;
 * }
 * ```
 */
export interface ProviderCallRecord {
  /** The consumer whose inbox this is (its spec name): the prefix of its provider keys too. */
  readonly consumer: string;
  /** Marks the provider call for this event done on its inbox entry (after the provider accepted it). */
  recordProviderCallDone(event: EventRef, work?: RecordWork): Promise<void>;
  /** Takes the lease on an owed provider call for `work`'s try (a first delivery's claim holds it already). */
  leaseProviderCall(event: EventRef, work: RecordWork): Promise<ProviderCallLease>;
  /** Gives this try's lease back after its provider call failed. */
  releaseProviderCallLease(event: EventRef, work: RecordWork): Promise<void>;
}

/**
 * The generic effect of a consumer made by `npm run new:consumer`: a count of
 * the events applied per entity. It knows no domain, and it is not idempotent
 * on its own (an ADD), so a missing inbox claim shows as a double count.
 * Nothing supersedes it: every event's provider call is owed until recorded done.
 *
 * @example
 * ```ts
 * const ledger: EntityEffectLedger = new DynamoDbEntityEffectLedger(wiring.documents, wiring.ledgerOptions);
 * ```
 */
export interface EntityEffectLedger extends ProviderCallRecord {
  /** Inbox claim + `appliedCount += 1` and `lastEventId` on the consumer's item for `event.entityId`, in one transaction. */
  apply(event: EventEnvelope, work?: RecordWork): Promise<LedgerResult>;
}
