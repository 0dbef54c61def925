import type { ApplyOutcome, LedgerResult, ProviderCallRecord } from '../ports/ledgers';

/**
 * After the ledger committed (or found a duplicate): calls the external provider
 * only while the call is owed, then records it done on the inbox entry. A
 * provider failure propagates (transient: the message is retried, and the call
 * is still owed then); the record comes only after the provider accepted.
 */
export async function callProviderIfOwed(
  result: LedgerResult,
  eventId: string,
  record: ProviderCallRecord,
  call: () => Promise<void>,
): Promise<ApplyOutcome> {
  if (result.providerCallPending) {
    await call();
    await record.recordProviderCallDone(eventId);
  }
  return result.outcome;
}
