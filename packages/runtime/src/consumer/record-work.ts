/**
 * The time one SQS record's work may take, and how it is stopped.
 *
 * A batch must return its partial response before the function times out:
 * thrown away by a timeout, every record of the batch comes back (applied ones
 * included), no try is counted, and a FIFO group stays blocked behind the hung
 * record. So the batch handler gives each record a deadline some margin before
 * the invocation ends, aborts `signal` there, and reports the record failed
 * (a try counted, its backoff set) if it is not done. Every SDK and provider
 * call of the record takes the signal, so a hung call is cancelled, not left
 * running into the next invocation.
 *
 * @example A ledger method passes the record's work on to its transaction
 * ```ts
 * async credit(event: OrderPlacedEvent, points: number, work?: RecordWork): Promise<LedgerResult> {
 *   return this.transact(event, [this.pointsUpdate(event.payload.customerId, points)], work);
 * }
 * ```
 */
export interface RecordWork {
  /** Aborted at `deadline`: pass it to every SDK and provider call the record makes. */
  readonly signal: AbortSignal;
  /** Epoch ms by which the record's work must be done. */
  readonly deadline: number;
  /**
   * Epoch ms until which a provider-call lease taken for this record holds: past
   * the invocation's own end, so no copy of the record can still be calling the
   * provider when the lease lapses.
   */
  readonly leaseUntil: number;
  /**
   * Who holds a lease taken for this record: unique per try and per receipt (the invocation's request id
   * and a hash of the record's receipt handle, queue-consumer.ts `leaseHolderOf`), never per message id:
   * two receipts of one message in one batch are two copies, and only one may take the claim's lease.
   */
  readonly leaseHolder: string;
  /**
   * The fingerprint of the message body the record's event came in (inbox/fingerprint.ts
   * `bodyFingerprint`), computed once per record by consumeRecord: what the inbox claim stores and a
   * failed claim is compared with, so a change in the consumer's parse never changes it. Unset (a
   * ledger or use case called without a record: a test, a script): the ledger fingerprints the
   * envelope it is given, taken as what was sent.
   */
  readonly sentFingerprint?: string;
  /**
   * What this record's try did, for its metrics (consume-record.ts): set by the ledger when the claim
   * and effect commit, and by callProviderIfOwed when it completes a call a duplicate owed. Shared by
   * every copy of the work the record's calls make. Unset: nothing is tallied.
   */
  readonly tally?: RecordTally;
  /**
   * Aborted when the batch must answer (some time after `deadline`): the bound of the writes that
   * record what a provider already did (the done-mark after a 2xx), which never run under `signal`.
   * Unset (a use case called on its own): they are bounded by {@link DONE_MARK_BOUND_MS}.
   */
  readonly recordingSignal?: AbortSignal;
  /**
   * Those writes while they run: consumeRecord waits for them past the deadline, so a provider's
   * answer that lands as the deadline fires is recorded, not dropped, and the next copy does not
   * call a keyless provider again. Unset: nothing waits for them.
   */
  readonly recordings?: Set<Promise<unknown>>;
}

/**
 * What one record's try did, as its metrics count it: whether its claim and effect committed (even if
 * the provider call after them then failed), and whether it completed a provider call that an earlier
 * try's commit left owed.
 *
 * @example A ledger marks its commit on the record's tally
 * ```ts
 * if (work?.tally !== undefined) work.tally.committed = true;
 * ```
 */
export interface RecordTally {
  committed: boolean;
  owedCallCompleted: boolean;
}

/** The bound of a done-mark written outside a consumer's batch (no `recordingSignal`): one conditional UpdateItem. */
export const DONE_MARK_BOUND_MS = 2_000;

/** The signal a write recording a provider's answer runs under: the record's `recordingSignal`, never its deadline. */
export function recordingSignal(work: RecordWork | undefined): AbortSignal {
  return work?.recordingSignal ?? AbortSignal.timeout(DONE_MARK_BOUND_MS);
}

/**
 * Thrown into a record's work at its deadline; transient: the record is tried again later.
 * `work.signal` is aborted with it (its `reason`).
 *
 * @example An ExternalProvider adapter tells a call cut at the deadline from a failed one
 * ```ts
 * import { DeadlineExceeded } from '..';
 *
 * try {
 *   await fetch(url, { method: 'POST', body, signal: options?.signal });
 * } catch (error) {
 *   if (options?.signal?.reason instanceof DeadlineExceeded) logger.warn('Warehouse call cut at the deadline', { idempotencyKey });
 *   throw error; // transient either way: the message comes back and the call is still owed
 * }
 * ```
 */
export class DeadlineExceeded extends Error {
  constructor(readonly deadline: number) {
    super(`The record's deadline (${new Date(deadline).toISOString()}) passed before its work was done`);
    this.name = 'DeadlineExceeded';
  }
}

/**
 * Another copy of the same event holds the lease on its provider call (it is
 * calling right now, or was until its invocation ended); transient: this copy is
 * retried later and by then finds the call done, or the lease lapsed.
 * callProviderIfOwed throws it; a use case lets it propagate.
 *
 * @example A test of a use case: a duplicate that owes the call, while another delivery holds its lease
 * ```ts
 * import { ProviderCallInProgress } from '@exactly-once/runtime';
 *
 * await expect(creditLoyaltyPoints(event, { ledger, mail }, work)).rejects.toBeInstanceOf(ProviderCallInProgress);
 * expect(mail.send).not.toHaveBeenCalled();
 * ```
 */
export class ProviderCallInProgress extends Error {
  constructor(
    readonly eventId: string,
    readonly leaseUntil: number | undefined,
  ) {
    super(
      `The provider call for ${eventId} is leased by another delivery` +
        (leaseUntil === undefined ? '' : ` until ${new Date(leaseUntil).toISOString()}`),
    );
    this.name = 'ProviderCallInProgress';
  }
}

/**
 * How long before the invocation's end the records' deadline falls: time for
 * the failure path (count the try, set its backoff, release skipped records)
 * and the partial response. A fifth of the time left, at most 5 s: 25 s of work
 * in a 30 s consumer.
 */
export const RECORD_DEADLINE_MARGIN_MS = 5_000;
/** A lease outlives the invocation that took it by this much (clock skew between the writers). */
export const LEASE_SKEW_MS = 2_000;

/**
 * The deadline and lease of every record of one invocation, and `answerBy`:
 * the last moment for a record's failure path (count the try, set its backoff,
 * copy to the DLQ), which takes no signal of its own. A record still on it then
 * is reported failed as it is, so even a hung DLQ send cannot make the batch
 * miss its answer: the message simply comes back.
 */
export function invocationDeadlines(startedAt: number, remainingMs: number) {
  const endsAt = startedAt + remainingMs;
  return {
    deadline: endsAt - Math.min(RECORD_DEADLINE_MARGIN_MS, Math.floor(remainingMs / 5)),
    answerBy: endsAt - Math.min(ANSWER_MARGIN_MS, Math.floor(remainingMs / 10)),
    leaseUntil: endsAt + LEASE_SKEW_MS,
  };
}

/** Time kept after `answerBy` for the partial response itself. */
export const ANSWER_MARGIN_MS = 1_000;
