import type { SQSRecord } from 'aws-lambda';
import { fullJitterBackoffSeconds } from '../domain/backoff';
import { PermanentError } from '../domain/errors';
import { parseOrderEvent, type OrderEvent } from '../domain/events';
import { InjectedTransientError, NO_FAULTS, roll, type FaultPlan } from '../domain/faults';
import type { ApplyOutcome } from '../ports/ledgers';
import { logger, metrics, MetricUnit } from '../shared/observability';
import { crashProcess } from './injected-crash';

/** What a consumer can do with a message besides acking or failing it (see adapters/sqs-message-control). */
export interface MessageControl {
  changeVisibility(receiptHandle: string, seconds: number): Promise<void>;
  sendToDeadLetterQueue(message: {
    body: string;
    messageId: string;
    groupId?: string;
    attributes: Record<string, string>;
  }): Promise<void>;
}

export interface ConsumerSettings {
  consumer: string;
  control: MessageControl;
  backoff: { baseSeconds: number; capSeconds: number };
  /** The queue's visibility timeout: a job still running at half of it extends it. */
  visibilityTimeoutSeconds: number;
}

const OUTCOME_METRIC: Record<ApplyOutcome, string> = {
  applied: 'EffectApplied',
  duplicate: 'DuplicateSuppressed',
  stale: 'StaleEventIgnored',
};

/**
 * One SQS record through a consumer:
 * - parse; a body that is not an event is a PermanentError;
 * - apply (claim + effect in one transaction) while a heartbeat keeps the
 *   message invisible if the job runs long;
 * - PermanentError: copy to the DLQ with cause, consumer and attempt, then ack,
 *   so the poison message does not burn the queue's retries;
 * - any other error: set the message's visibility to a jittered exponential
 *   backoff from its receive count and rethrow, so the batch reports it failed.
 * Nothing is swallowed: only the inbox claim's condition failure counts as done.
 */
export async function consumeRecord(
  record: SQSRecord,
  settings: ConsumerSettings,
  apply: (event: OrderEvent) => Promise<ApplyOutcome>,
  faults: FaultPlan = NO_FAULTS,
): Promise<ApplyOutcome | 'dead-lettered'> {
  const attempt = Number(record.attributes.ApproximateReceiveCount ?? '1');
  // Injected slowness runs before the heartbeat on purpose: it stands for a
  // handler that outlives its visibility timeout, so the message is redelivered meanwhile.
  if (roll(faults.slowHandler, faults))
    await new Promise((r) => setTimeout(r, (faults.slowHandlerSeconds ?? 0) * 1000));
  const stopHeartbeat = startHeartbeat(record, settings);
  try {
    const event = parseOrderEvent(record.body);
    if (roll(faults.transientError, faults)) throw new InjectedTransientError(settings.consumer);
    const outcome = await apply(event);
    if (outcome === 'applied' && roll(faults.crashAfterEffect, faults))
      crashProcess(`${settings.consumer} after the effect of ${event.eventId}, before the ack`);
    metrics.addMetric(OUTCOME_METRIC[outcome], MetricUnit.Count, 1);
    if (outcome !== 'applied')
      logger.info('Event not applied again', { outcome, eventId: event.eventId, messageId: record.messageId });
    return outcome;
  } catch (error) {
    if (error instanceof PermanentError) {
      await settings.control.sendToDeadLetterQueue({
        body: record.body,
        messageId: record.messageId,
        groupId: record.attributes.MessageGroupId,
        attributes: {
          failureCause: error.permanentCause,
          failureMessage: error.message,
          consumer: settings.consumer,
          attempt: String(attempt),
          originalMessageId: record.messageId,
        },
      });
      metrics.addMetric('PermanentFailure', MetricUnit.Count, 1);
      logger.error('Permanent failure: message moved to the DLQ', { messageId: record.messageId, error });
      return 'dead-lettered';
    }
    const delay = fullJitterBackoffSeconds(attempt, settings.backoff);
    await settings.control
      .changeVisibility(record.receiptHandle, delay)
      .catch((visibilityError) => logger.warn('Could not set retry backoff', { visibilityError }));
    metrics.addMetric('TransientFailure', MetricUnit.Count, 1);
    logger.warn('Transient failure: message will be retried', { messageId: record.messageId, attempt, delay, error });
    throw error;
  } finally {
    stopHeartbeat();
  }
}

function startHeartbeat(record: SQSRecord, settings: ConsumerSettings): () => void {
  const periodMs = (settings.visibilityTimeoutSeconds * 1000) / 2;
  const timer = setInterval(() => {
    settings.control
      .changeVisibility(record.receiptHandle, settings.visibilityTimeoutSeconds)
      .catch((error) => logger.warn('Visibility heartbeat failed', { messageId: record.messageId, error }));
  }, periodMs);
  timer.unref();
  return () => clearInterval(timer);
}
