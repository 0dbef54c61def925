import type { SQSRecord } from 'aws-lambda';
import { honourRetryHint, retryBackoffSeconds } from './retry-budget';
import { eventAgeSeconds, MAX_FUTURE_SKEW_SECONDS } from './dedupe-horizon';
import { PermanentError, retryAfterSecondsOf } from '../errors';
import type { RecordWork } from './record-work';
import type { EventEnvelope } from '../envelope';
import type { MessageControl, TryCounter } from './ports';
import type { ApplyOutcome } from '../inbox/ports';
import { beforeAbort } from '../runtime/abort';
import { logger, metrics, MetricUnit } from '../runtime/observability';
import { activeTraceparent, inSpan } from '../trace/spans';
import { keepingSpans, keepSpansFromNowOn } from '../trace/span-sampling';
import { recordQueueWait } from './record-trace';
import { bodyFingerprint } from '../inbox/fingerprint';
import { outcomeMetrics } from './outcome-metrics';

export interface ConsumerSettings {
  consumer: string;
  control: MessageControl;
  /** The queue backoff after a failed try: ceiling min(cap, base * 2^(try-1)), equal jitter (consumer/retry-budget.ts). */
  backoff: { baseSeconds: number; capSeconds: number };
  /**
   * The oldest an event may be (by its `occurredAt`) for this consumer to apply
   * it by itself (consumer/dedupe-horizon.ts); an older one is dead-letterd with the
   * cause DedupeHorizonPassed, since its inbox claim may be gone.
   */
  dedupeHorizonSeconds: number;
  /**
   * How far ahead of `now` an event's `occurredAt` may be before it is refused (OccurredInFuture).
   * @default MAX_FUTURE_SKEW_SECONDS (300), the margin the DedupeHorizon synth rule counts on
   */
  maxFutureSkewSeconds?: number;
  /**
   * The code this consumer runs (its bundle's asset hash, CODE_VERSION): every DLQ copy says which code
   * wrote it, so a person can tell a copy written before a fix from one written after.
   * @default 'unknown'
   */
  codeVersion?: string;
  /** The clock the horizon is judged on. */
  now: () => Date;
  /**
   * FIFO only: the consumer counts its own tries and dead-letters a transiently
   * failing record itself after `maxAttempts` of them, because SQS's receive
   * count also counts the receives in which the record was skipped, untried,
   * behind a failure in its group. The queue's maxReceiveCount is then only a
   * backstop for crashes. Unset (standard queue): SQS's redrive dead-letters at
   * maxReceiveCount, and the receive count is the try count.
   */
  tryLimit?: { maxAttempts: number; counter: TryCounter };
}

/**
 * One SQS record through a consumer:
 * - parse with the consumer's own `parse` (its domain's schema, or parseEnvelope
 *   for the envelope alone); a body it refuses is a PermanentError;
 * - an event older than the dedupe horizon (or with no readable `occurredAt`)
 *   is a PermanentError too: applied nothing, called no provider;
 * - apply (claim + effect in one transaction, contention retried in-process
 *   by the ledger), until the record's deadline (`work`): past it, the record
 *   fails as a transient error would, so its try is counted and backed off and
 *   the batch still answers before the function times out;
 * - PermanentError: copy to the DLQ with cause, consumer and attempt, then ack,
 *   so the poison message does not burn the queue's retries;
 * - any other error: set the message's visibility to the backoff of its try
 *   number (lengthened, up to the cap, by the error's RetryLater hint: a
 *   provider's Retry-After) and rethrow, so the batch reports it failed (or, on FIFO, once its
 *   own tries are spent, copy it to the DLQ with the last error and ack).
 * Nothing is swallowed: only the inbox claim's condition failure counts as done.
 *
 * There is no visibility heartbeat: the queues' visibility timeout is at least
 * 6 x the function timeout (an Aspect enforces it), and Lambda stops an
 * invocation at its timeout, so no try can outlive the visibility of its
 * message. A heartbeat could only fire after the job had been killed, and
 * would then overwrite the backoff set on failure.
 */
export async function consumeRecord<E extends EventEnvelope>(
  record: SQSRecord,
  settings: ConsumerSettings,
  parse: (body: string) => E,
  apply: (event: E, work: RecordWork) => Promise<ApplyOutcome>,
  work: RecordWork,
): Promise<ApplyOutcome | 'dead-lettered'> {
  // The trace: its time in the queue (first receive), then this try as a `consumer` span (its provider calls are children).
  const queued = recordQueueWait(record, Date.now());
  const receiveCount = record.attributes?.ApproximateReceiveCount ?? '1';
  // A retried try's spans are written whatever the span sampling decided for its trace: it is what a person looks for.
  return keepingSpans(Number(receiveCount) > 1, () =>
    inSpan('consumer', queued, () => consume(record, settings, parse, apply, work), {
      consumer: settings.consumer,
      messageId: record.messageId,
      receiveCount,
    }),
  );
}

async function consume<E extends EventEnvelope>(
  record: SQSRecord,
  settings: ConsumerSettings,
  parse: (body: string) => E,
  apply: (event: E, work: RecordWork) => Promise<ApplyOutcome>,
  work: RecordWork,
): Promise<ApplyOutcome | 'dead-lettered'> {
  const receiveCount = Number(record.attributes.ApproximateReceiveCount ?? '1');
  // Its mean rising is the first sign that tries take longer than the visibility timeout allows.
  metrics.addMetric('ReceiveCount', MetricUnit.Count, receiveCount);
  const tally = work.tally ?? { committed: false, owedCallCompleted: false };
  const count = (end: ApplyOutcome | 'failed') => {
    for (const name of outcomeMetrics(end, tally)) metrics.addMetric(name, MetricUnit.Count, 1);
  };
  try {
    const event = parse(record.body);
    refuseOutsideHorizon(event, settings);
    // What the producer sent, fingerprinted once, whatever the parse made of it (inbox/fingerprint.ts).
    const recordWork: RecordWork = { ...work, sentFingerprint: bodyFingerprint(record.body), tally };
    const outcome = await untilDeadline(apply(event, recordWork), recordWork);
    count(outcome);
    if (outcome !== 'applied')
      logger.info('Event not applied again', {
        outcome,
        eventId: event.eventId,
        messageId: record.messageId,
        traceparent: activeTraceparent(),
      });
    return outcome;
  } catch (error) {
    // A commit before the failure (the provider call after it failed) is still counted, in this try.
    count('failed');
    if (error instanceof PermanentError) {
      // Not a thrown span: its consumer span is written all the same (span sampling), as a failed one would be.
      keepSpansFromNowOn();
      await deadLetter(record, settings, {
        ...error.details,
        failureCause: error.permanentCause,
        failureMessage: error.message,
        attempt: String(receiveCount),
      });
      metrics.addMetric('PermanentFailure', MetricUnit.Count, 1);
      logger.error('Permanent failure: message moved to the DLQ', {
        messageId: record.messageId,
        traceparent: activeTraceparent(),
        error,
      });
      return 'dead-lettered';
    }
    return failTransiently(record, settings, error, receiveCount);
  }
}

/**
 * The record's work, or DeadlineExceeded at its deadline, unless a provider's answer is being
 * recorded right then: that write has its own bound (record-work.ts recordingSignal), so the record
 * waits for it and ends as its work ends. Cut, the done-mark would be lost and the next copy would
 * call the provider again.
 */
async function untilDeadline<T>(running: Promise<T>, work: RecordWork): Promise<T> {
  try {
    return await beforeAbort(running, work.signal);
  } catch (error) {
    if (work.signal.aborted && (work.recordings?.size ?? 0) > 0) return running;
    throw error;
  }
}

async function failTransiently(
  record: SQSRecord,
  settings: ConsumerSettings,
  error: unknown,
  receiveCount: number,
): Promise<'dead-lettered'> {
  // Its consumer span is written whatever the span sampling decided, also when it ends dead-lettered rather than thrown.
  keepSpansFromNowOn();
  let attempt = receiveCount;
  if (settings.tryLimit !== undefined) {
    const tries = await settings.tryLimit.counter
      .recordFailedTry(settings.consumer, record.messageId)
      .catch((counterError: unknown) => {
        // Without the count (the table may be what is failing), back off by the receive count
        // and leave dead-lettering to the queue's backstop: never dead-letter on a guess.
        logger.warn('Could not count the failed try', { messageId: record.messageId, counterError });
        return undefined;
      });
    if (tries !== undefined && tries >= settings.tryLimit.maxAttempts) {
      await deadLetter(record, settings, {
        failureCause: 'RetryBudgetExhausted',
        failureMessage: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
        attempt: String(tries),
      });
      metrics.addMetric('RetryBudgetExhausted', MetricUnit.Count, 1);
      logger.error('Retry budget spent: message moved to the DLQ', {
        messageId: record.messageId,
        traceparent: activeTraceparent(),
        tries,
        error,
      });
      return 'dead-lettered';
    }
    attempt = tries ?? receiveCount;
  }
  // The error's own hint (a provider's Retry-After) may lengthen the wait, up to the cap, never shorten it.
  const hint = retryAfterSecondsOf(error);
  const delay = honourRetryHint(retryBackoffSeconds(attempt, settings.backoff), hint, settings.backoff);
  await settings.control
    .changeVisibility(record.receiptHandle, delay)
    .catch((visibilityError) => logger.warn('Could not set retry backoff', { visibilityError }));
  metrics.addMetric('TransientFailure', MetricUnit.Count, 1);
  logger.warn('Transient failure: message will be retried', {
    messageId: record.messageId,
    traceparent: activeTraceparent(),
    attempt,
    delay,
    retryAfterSeconds: hint,
    error,
  });
  throw error;
}

function deadLetter(
  record: SQSRecord,
  settings: ConsumerSettings,
  why: { failureCause: string; failureMessage: string; attempt: string; [detail: string]: string },
): Promise<void> {
  return settings.control.sendToDeadLetterQueue({
    body: record.body,
    messageId: record.messageId,
    groupId: record.attributes.MessageGroupId,
    attributes: {
      ...why,
      consumer: settings.consumer,
      codeVersion: settings.codeVersion ?? 'unknown',
      originalMessageId: record.messageId,
    },
  });
}

/**
 * An event whose claim may have expired is not applied automatically: with the
 * claim gone, a second delivery would apply the effect again. A person decides
 * (the DLQ tool's redrive --past-horizon, after checking the effect by hand).
 * Nor is one stamped further ahead than the clock-skew margin: the horizon is
 * counted from its `occurredAt`, which its producer's clock got wrong.
 */
function refuseOutsideHorizon(event: EventEnvelope, settings: ConsumerSettings): void {
  const now = settings.now();
  const age = eventAgeSeconds(event.occurredAt, now);
  if (age === undefined)
    throw new PermanentError('SchemaViolation', `occurredAt "${event.occurredAt}" is not a timestamp`);
  const maxSkew = settings.maxFutureSkewSeconds ?? MAX_FUTURE_SKEW_SECONDS;
  if (-age > maxSkew)
    throw new PermanentError(
      'OccurredInFuture',
      `${event.eventId} occurred at ${event.occurredAt}, ${Math.round(-age)} s after ${now.toISOString()}, ` +
        `more than the ${maxSkew} s clock skew allowed: its producer's clock is wrong, and the ` +
        'dedupe horizon counted from that stamp would not hold',
    );
  if (age > settings.dedupeHorizonSeconds)
    throw new PermanentError(
      'DedupeHorizonPassed',
      `${event.eventId} occurred at ${event.occurredAt}, more than ${settings.dedupeHorizonSeconds} s before ` +
        `${now.toISOString()}: its inbox claim may have expired, so applying it could apply its effect twice`,
    );
}
