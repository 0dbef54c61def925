import type { RecordWork } from '@exactly-once/runtime/consumer/record-work';

/**
 * Guard `sentFingerprint` (consume-record.ts, `RecordWork.sentFingerprint`): the claim's fingerprint is
 * of the record's message body. Off: the ledger has no body fingerprint and falls back to the parsed
 * event's, so after a parser change an event claimed before it reads as another event under its id.
 */
export function workUnderGuard(on: boolean, work: RecordWork): RecordWork {
  return on ? work : { ...work, sentFingerprint: undefined };
}
