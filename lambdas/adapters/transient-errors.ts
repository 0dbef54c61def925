import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';

/**
 * Which SDK errors are contention: another writer touched the same items
 * (TransactionConflict) or the table is throttling. Both usually clear within
 * milliseconds, so a consumer retries them in-process, with jitter, before it
 * fails the message into the much slower queue backoff.
 *
 * Never contention: a ConditionalCheckFailed (on the inbox claim it means
 * "already done" and the ledger has turned it into `duplicate` before this is
 * asked; on an effect it means the state moved on), a validation error, or
 * anything else: those go to the queue's retry or the DLQ as before.
 */
const THROTTLING_NAMES = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'TransactionConflictException',
  'TransactionInProgressException',
]);
const CONTENTION_REASONS = new Set([
  'TransactionConflict',
  'ThrottlingError',
  'ProvisionedThroughputExceeded',
  'RequestLimitExceeded',
]);

export function isContention(error: unknown): boolean {
  if (error instanceof TransactionCanceledException) {
    const codes = (error.CancellationReasons ?? []).map((r) => r.Code ?? 'None').filter((c) => c !== 'None');
    // Every reason must be contention: a conflict next to a failed condition is still that condition's failure.
    return codes.length > 0 && codes.every((c) => CONTENTION_REASONS.has(c));
  }
  if (!(error instanceof Error)) return false;
  const throttling = (error as { $retryable?: { throttling?: boolean } }).$retryable?.throttling === true;
  return throttling || THROTTLING_NAMES.has(error.name);
}
