import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';

/**
 * How the functions classify SDK errors: here, next to the SDK, so the names
 * DynamoDB gives its errors are listed once.
 *
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

/**
 * Whether an SDK error is contention (see above): worth a short in-process retry with jitter. A
 * cancelled transaction counts only when every reason that cancelled it is contention.
 *
 * @example A bounded in-process retry of one write (a consumer's wiring already retries its ledger's writes)
 * ```ts
 * import { isContention } from '.';
 *
 * for (let attempt = 1; ; attempt++) {
 *   try {
 *     return await orders.cancel(order, cancelledAt, event);
 *   } catch (error) {
 *     if (!isContention(error) || attempt === 3) throw error;
 *     await new Promise((resolve) => setTimeout(resolve, 20 * attempt * Math.random()));
 *   }
 * }
 * ```
 */
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

/**
 * Errors that say "not now", not "never", for the API: contention (above), plus
 * a failing or unreachable service. Retrying can succeed.
 */
const TRANSIENT_ERRORS = new Set([...THROTTLING_NAMES, 'InternalServerError', 'ServiceUnavailable', 'TimeoutError']);

/** The same, in a cancelled transaction's CancellationReasons (the exception names too, as some emulators give them). */
const TRANSIENT_CANCELLATION_REASONS = new Set([
  ...CONTENTION_REASONS,
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'TransactionInProgressException',
  'InternalServerError',
  'ServiceUnavailable',
]);

const NETWORK_ERROR_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN']);

/**
 * Whether an error means a dependency (DynamoDB) is down, throttling or
 * conflicting rather than a bug: those earn a 503 and a retry; a bug earns a 500.
 * Judged by name, and through `cause`, because the error may reach the handler
 * wrapped (Powertools' idempotency wraps what the persistence layer threw).
 *
 * A cancelled transaction is judged by its reasons: it is transient only when
 * every reason that cancelled it is. A ValidationError (an item too large, a
 * bad expression) or an unexpected condition failure would fail the same way
 * on every retry, so telling the client to retry would be a lie: that is a 500.
 *
 * @example Every API handler's last resort (packages/runtime/src/api/http.ts)
 * ```ts
 * import { isDependencyFailure } from '.';
 * import { logger } from '../runtime';
 *
 * export function unexpectedErrorResponse(error: unknown): HttpResponse {
 *   if (isDependencyFailure(error)) return serviceUnavailable();
 *   logger.error('Unexpected error', { error });
 *   return internalError();
 * }
 * ```
 */
export function isDependencyFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const sdk = error as Error & { $fault?: string; code?: string; cause?: unknown; CancellationReasons?: unknown };
  if (error.name === 'TransactionCanceledException') return cancelledByTransientReasons(sdk.CancellationReasons);
  if (sdk.$fault === 'server' || TRANSIENT_ERRORS.has(error.name)) return true;
  if (sdk.code !== undefined && NETWORK_ERROR_CODES.has(sdk.code)) return true;
  return sdk.cause !== undefined && isDependencyFailure(sdk.cause);
}

function cancelledByTransientReasons(reasons: unknown): boolean {
  if (!Array.isArray(reasons)) return false;
  const codes = reasons.map((r) => (r as { Code?: unknown } | undefined)?.Code).filter((code) => code !== 'None');
  return (
    codes.length > 0 && codes.every((code) => typeof code === 'string' && TRANSIENT_CANCELLATION_REASONS.has(code))
  );
}

/**
 * Whether DynamoDB refused a request as invalid (a ValidationException, or a transaction cancelled by a
 * ValidationError: an item over 400 KB, a key over its size limit, a bad expression). It would be
 * refused the same way on every retry, so a consumer dead-letters it at once (WriteRejected).
 *
 * @example
 * ```ts
 * if (isInvalidRequest(error)) throw new PermanentError('WriteRejected', (error as Error).message);
 * ```
 */
export function isInvalidRequest(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === 'ValidationException') return true;
  if (!(error instanceof TransactionCanceledException)) return false;
  return (error.CancellationReasons ?? []).some((r) => r.Code === 'ValidationError');
}
