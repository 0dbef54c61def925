import { ProviderCallInProgress, recordingSignal, type RecordWork } from '../consumer/record-work';
import type { ApplyOutcome, EventRef, LedgerResult, ProviderCallRecord } from '../inbox/ports';
import { PermanentError } from '../errors';
import { logger } from '../runtime/observability';
import { providerKey } from '../inbox/keys';

/**
 * After the ledger committed (or found a duplicate): calls the external provider
 * only while the call is owed, and only while this delivery holds the call's
 * lease, then records it done on the inbox entry.
 *
 * - applied: the claim took the lease in the same transaction;
 * - a duplicate whose call has been owed longer than the provider's key window
 *   (the ledger says so) is refused with ProviderKeyWindowPassed, never called;
 * - a duplicate that owes the call takes the lease first; if another delivery
 *   holds it (a concurrent copy on a standard queue, mid-call), this one throws
 *   ProviderCallInProgress, a transient error: its message comes back later and
 *   then finds the call done. Without the lease both copies would call at once,
 *   and a provider that takes no key (SMTP, SES) would send twice.
 * A provider failure propagates (transient: the message is retried, and the call
 * is still owed then) after the lease is given back, unless the call was cut at
 * the record's deadline (then the lease lapses on its own, after the invocation); the done-mark comes only
 * after the provider accepted, and only the done-mark is retried on contention
 * (never the call: a retry must not repeat a call that went through). The done-mark runs under
 * its own short bound (recordingSignal), not the record's deadline, and the record waits for it:
 * a provider answer that lands as the deadline fires is still recorded.
 *
 * `call` is handed the idempotency key to send: the one the event's claim recorded (`result.claim`),
 * which for a claim an earlier release wrote is that release's key, so a call it owes is never repeated
 * under a new key; `providerKey(consumer, event)` when the ledger names none. The lease and the
 * done-mark act on the entry the claim lives in.
 *
 * @example A loyalty use case: points credited under the claim, then the confirmation mail it owes
 * ```ts
 * import { callProviderIfOwed } from '..';
 *
 * const result = await deps.ledger.credit(event, points, work);
 * return callProviderIfOwed(
 *   result,
 *   event,
 *   deps.ledger,
 *   (signal, key) => deps.mail.send(key, { template: 'order-confirmation' }, { signal }),
 *   work,
 * );
 * ```
 */
export async function callProviderIfOwed(
  result: LedgerResult,
  event: EventRef,
  record: ProviderCallRecord,
  call: (signal: AbortSignal | undefined, idempotencyKey: string) => Promise<void>,
  work?: RecordWork,
): Promise<ApplyOutcome> {
  if (!result.providerCallPending) return result.outcome;
  const { eventId } = event;
  const key = result.claim?.providerKey ?? providerKey(record.consumer, event);
  const at: EventRef = result.claim === undefined ? event : { eventId, tenant: event.tenant, claim: result.claim };
  // Owed longer than the provider remembers keys: the first call may have gone through unanswered, and
  // the provider would take a repeat for a new request. A person checks at the provider instead.
  if (result.providerKeyWindowPassed === true)
    throw new PermanentError(
      'ProviderKeyWindowPassed',
      `The provider call for ${eventId} has been owed since its claim, longer than the provider's key window: check at the provider whether it was performed before sending it again`,
    );
  if (result.outcome !== 'applied' && work !== undefined) {
    const lease = await record.leaseProviderCall(at, work);
    if (lease === 'done') return result.outcome;
    if (lease === 'held') throw new ProviderCallInProgress(eventId, undefined);
  }
  try {
    await call(work?.signal, key);
  } catch (error) {
    // A call cut at the deadline may still be on its way to the provider: its lease must run out, or a
    // retry could call under the same key while it lands (the simulation found a PICK landing after the
    // retry's CANCEL_PICK this way). Only a call that ended on its own gives the lease back.
    if (work !== undefined && !work.signal.aborted)
      await record
        .releaseProviderCallLease(at, work)
        .catch((releaseError: unknown) => logger.warn('Could not give the provider-call lease back', { releaseError }));
    throw error;
  }
  // The provider has answered 2xx: record it whatever the record's deadline says (its own bound, and
  // consumeRecord waits for it), or the next copy would call a keyless provider again.
  const recording = record.recordProviderCallDone(
    at,
    work === undefined ? undefined : { ...work, signal: recordingSignal(work) },
  );
  work?.recordings?.add(recording);
  try {
    await recording;
  } finally {
    work?.recordings?.delete(recording);
  }
  // A duplicate that made the call an earlier try's commit left owed: counted as that, not as a suppressed copy.
  if (result.outcome !== 'applied' && work?.tally !== undefined) work.tally.owedCallCompleted = true;
  return result.outcome;
}
