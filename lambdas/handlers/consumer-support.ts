import type { SQSRecord } from 'aws-lambda';
import { fullJitterBackoffSeconds, retryBackoffSeconds } from '../domain/backoff';
import { PermanentError } from '../domain/errors';
import type { EventEnvelope } from '../messaging/envelope';
import type { MessageControl, TryCounter } from '../ports/consumer-queue';
import type { ApplyOutcome } from '../ports/ledgers';
import { logger, metrics, MetricUnit } from '../shared/observability';

// The ports stay importable from here too, where the consumer settings that use them live.
export type { MessageControl, TryCounter } from '../ports/consumer-queue';

/**
 * Contention (a transaction conflict, throttling) is retried inside the
 * invocation first: a few tries, full-jitter waits of at most
 * `attempts - 1` x `capMs` in all, far inside the function timeout.
 */
export interface InProcessRetry {
  attempts: number;
  baseMs: number;
  capMs: number;
  isContention(error: unknown): boolean;
  sleep?(ms: number): Promise<void>;
  random?(): number;
}

export const IN_PROCESS_RETRY = Object.freeze({ attempts: 3, baseMs: 100, capMs: 1_000 });

export interface ConsumerSettings {
  consumer: string;
  control: MessageControl;
  /** The queue backoff after a failed try: ceiling min(cap, base * 2^(try-1)), equal jitter (domain/backoff). */
  backoff: { baseSeconds: number; capSeconds: number };
  inProcess: InProcessRetry;
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

const OUTCOME_METRIC: Record<ApplyOutcome, string> = {
  applied: 'EffectApplied',
  duplicate: 'DuplicateSuppressed',
  stale: 'StaleEventIgnored',
};

/**
 * One SQS record through a consumer:
 * - parse with the consumer's own `parse` (its domain's schema, or parseEnvelope
 *   for the envelope alone); a body it refuses is a PermanentError;
 * - apply (claim + effect in one transaction), retrying contention in-process;
 * - PermanentError: copy to the DLQ with cause, consumer and attempt, then ack,
 *   so the poison message does not burn the queue's retries;
 * - any other error: set the message's visibility to the backoff of its try
 *   number and rethrow, so the batch reports it failed (or, on FIFO, once its
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
  apply: (event: E) => Promise<ApplyOutcome>,
): Promise<ApplyOutcome | 'dead-lettered'> {
  const receiveCount = Number(record.attributes.ApproximateReceiveCount ?? '1');
  try {
    const event = parse(record.body);
    const outcome = await withContentionRetries(() => apply(event), settings.inProcess);
    metrics.addMetric(OUTCOME_METRIC[outcome], MetricUnit.Count, 1);
    if (outcome !== 'applied')
      logger.info('Event not applied again', { outcome, eventId: event.eventId, messageId: record.messageId });
    return outcome;
  } catch (error) {
    if (error instanceof PermanentError) {
      await deadLetter(record, settings, {
        failureCause: error.permanentCause,
        failureMessage: error.message,
        attempt: String(receiveCount),
      });
      metrics.addMetric('PermanentFailure', MetricUnit.Count, 1);
      logger.error('Permanent failure: message moved to the DLQ', { messageId: record.messageId, error });
      return 'dead-lettered';
    }
    return failTransiently(record, settings, error, receiveCount);
  }
}

async function failTransiently(
  record: SQSRecord,
  settings: ConsumerSettings,
  error: unknown,
  receiveCount: number,
): Promise<'dead-lettered'> {
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
      logger.error('Retry budget spent: message moved to the DLQ', { messageId: record.messageId, tries, error });
      return 'dead-lettered';
    }
    attempt = tries ?? receiveCount;
  }
  const delay = retryBackoffSeconds(attempt, settings.backoff);
  await settings.control
    .changeVisibility(record.receiptHandle, delay)
    .catch((visibilityError) => logger.warn('Could not set retry backoff', { visibilityError }));
  metrics.addMetric('TransientFailure', MetricUnit.Count, 1);
  logger.warn('Transient failure: message will be retried', { messageId: record.messageId, attempt, delay, error });
  throw error;
}

function deadLetter(
  record: SQSRecord,
  settings: ConsumerSettings,
  why: { failureCause: string; failureMessage: string; attempt: string },
): Promise<void> {
  return settings.control.sendToDeadLetterQueue({
    body: record.body,
    messageId: record.messageId,
    groupId: record.attributes.MessageGroupId,
    attributes: { ...why, consumer: settings.consumer, originalMessageId: record.messageId },
  });
}

/** Runs `work`, retrying contention up to `policy.attempts` tries in all with full-jitter waits; rethrows the rest. */
export async function withContentionRetries<T>(work: () => Promise<T>, policy: InProcessRetry): Promise<T> {
  const sleep = policy.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const random = policy.random ?? Math.random;
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= policy.attempts || !policy.isContention(error)) throw error;
      // The domain's full jitter, counted in milliseconds here.
      const waitMs = fullJitterBackoffSeconds(
        attempt,
        { baseSeconds: policy.baseMs, capSeconds: policy.capMs },
        random,
      );
      logger.info('Contention: retrying in-process', { attempt, waitMs, error });
      await sleep(waitMs);
    }
  }
}
