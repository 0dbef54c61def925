/**
 * An error that no retry can fix (a malformed message, an unknown entity). A
 * consumer sends the message to its DLQ at once, with this cause, instead of
 * burning the queue's receive count on it. Every other error is transient.
 *
 * @example A use case refuses an event type its consumer does not take (a loyalty consumer of OrderPlaced only)
 * ```ts
 * import { PermanentError } from '@exactly-once/runtime';
 *
 * if (event.type !== 'OrderPlaced') {
 *   throw new PermanentError('UnsupportedEventType', `Loyalty consumes OrderPlaced only, got ${event.type}`);
 * }
 * ```
 */
export class PermanentError extends Error {
  constructor(
    readonly permanentCause: PermanentCause,
    message: string,
    /**
     * What a person needs beside the cause, copied onto the DLQ copy as message attributes
     * (EventIdReused: both fingerprints). Names must not clash with the consumer's own
     * (failureCause, failureMessage, attempt, consumer, originalMessageId): those win.
     */
    readonly details: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = 'PermanentError';
  }
}

/**
 * Why a message can never succeed: a PermanentError's `permanentCause`, which the consumer sends
 * to the DLQ with the message as its `failureCause` attribute.
 *
 * - SchemaViolation: the body is not an event the consumer can read;
 * - UnsupportedEventType: an event type the consumer does not take;
 * - DedupeHorizonPassed: the event is older than the consumer's dedupe horizon
 *   (consumer/dedupe-horizon.ts): its inbox claim may be gone, so only a person may
 *   decide to apply it;
 * - ProviderRejected: an external provider refused the call for good (a 4xx
 *   other than 409 and 429, e.g. 422: the same idempotency key came with
 *   another payload, a bug on our side); retrying the same request under the
 *   same key would be refused the same way;
 * - ProviderKeyWindowPassed: the provider call has been owed for longer than the
 *   provider remembers idempotency keys (aws/inbox-ledger.ts `providerKeyWindowSeconds`):
 *   an earlier try may have been performed with its answer lost, and a repeat now
 *   would be a second effect, so only a person, who can check at the provider, may decide.
 * - EventIdReused: the inbox already holds a claim on this eventId for an event sent with other
 *   content (the fingerprints of the two message bodies differ in more than `occurredAt` and
 *   `traceparent`; inbox/fingerprint.ts). Either a producer reused an id for a second state change or
 *   someone forged a message; acknowledging it as a duplicate would lose an event without a trace, so
 *   a person looks at both (the DLQ copy carries the stored and the delivered fingerprint);
 * - OccurredInFuture: the event's `occurredAt` is further ahead of the consumer's clock than the
 *   clock-skew margin (consumer/dedupe-horizon.ts MAX_FUTURE_SKEW_SECONDS): its claim's expiry
 *   could not be trusted to outlive it, so it is not applied;
 * - WriteRejected: DynamoDB refused the effect's write as invalid (a ValidationException: an item
 *   too large, a bad expression); the same write fails the same way on every retry.
 * - VersionReused: a sequenced ledger (aws/sequenced-ledger.ts) already applied another event at this
 *   version of the entity: a producer gave one version to two events (or a message was forged), and
 *   acknowledging this one as "already done" would lose it, so a person compares the two (the DLQ copy
 *   carries the applied event's id and fingerprint).
 * The proof kit's poison fault sends bodies that are not events: they are SchemaViolation like any other.
 *
 * @example
 * ```ts
 * throw new PermanentError('ProviderRejected', `warehouse refused ${idempotencyKey} with 422`);
 * ```
 */
export type PermanentCause =
  | 'SchemaViolation'
  | 'UnsupportedEventType'
  | 'DedupeHorizonPassed'
  | 'ProviderRejected'
  | 'ProviderKeyWindowPassed'
  | 'EventIdReused'
  | 'OccurredInFuture'
  | 'WriteRejected'
  | 'VersionReused';

/**
 * A transient error that says how long to wait before the next try: a
 * provider's `Retry-After` (429, 503) or its "still running that key" (409).
 * The consumer backs the message off for the longer of its own backoff and
 * this hint, never above the queue's backoff cap (consumer/retry-budget.ts
 * honourRetryHint), so a hint can neither shorten the retry budget nor hold a
 * message longer than the cap allows for one wait.
 *
 * @example An ExternalProvider adapter passes on a provider's 429
 * ```ts
 * import { RetryLater } from '@exactly-once/runtime';
 *
 * if (response.status === 429) {
 *   const seconds = Number(response.headers.get('Retry-After') ?? 30);
 *   throw new RetryLater(seconds, `warehouse throttled ${idempotencyKey}`);
 * }
 * ```
 */
export class RetryLater extends Error {
  constructor(
    /** The least the provider asks us to wait, in seconds (not negative, not necessarily whole). */
    readonly retryAfterSeconds: number,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'RetryLater';
  }
}

/**
 * The backoff hint an error carries: the `retryAfterSeconds` of the first
 * RetryLater on its `cause` chain (a wrapper may sit in front of it), or
 * undefined when there is none or it is not a finite, non-negative number.
 *
 * @example
 * ```ts
 * import { RetryLater } from '@exactly-once/runtime';
 * import { retryAfterSecondsOf } from '@exactly-once/runtime/runtime';
 *
 * const error = new Error('use case failed', { cause: new RetryLater(30, 'warehouse busy') });
 * retryAfterSecondsOf(error); // 30
 * retryAfterSecondsOf(new Error('timeout')); // undefined
 * ```
 */
export function retryAfterSecondsOf(error: unknown): number | undefined {
  let e = error;
  for (let depth = 0; typeof e === 'object' && e !== null && depth < 10; depth++) {
    if (e instanceof RetryLater)
      return Number.isFinite(e.retryAfterSeconds) && e.retryAfterSeconds >= 0 ? e.retryAfterSeconds : undefined;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}
