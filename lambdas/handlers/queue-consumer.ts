import {
  BatchProcessor,
  EventType,
  processPartialResponse,
  SqsFifoPartialProcessorAsync,
} from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { EventEnvelope } from '../messaging/envelope';
import type { ApplyOutcome } from '../ports/ledgers';
import { flushMetrics, logger } from '../shared/observability';
import { consumeRecord, type ConsumerSettings } from './consumer-support';
import type { ConsumerWiring } from './consumer-wiring';

/** What makes one queue consumer differ from another: its queue type, its event and its use case. */
export interface QueueConsumer<E extends EventEnvelope> {
  /** The spec's `fifo`: the processor must match the queue the stack gives the consumer. */
  fifo: boolean;
  /** A message body as this consumer's event; throws a PermanentError on a body it can never use. */
  parse(body: string): E;
  /** The use case on one event. The record is there for `wiring.ledgerFor` (the simulation's guard switches). */
  apply(event: E, record: SQSRecord): Promise<ApplyOutcome>;
}

export type QueueConsumerHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

/**
 * The Lambda handler of a queue consumer: every record through consumeRecord
 * (parse, apply with in-process contention retries, DLQ on a PermanentError,
 * backoff and a reported failure on any other error), inside the consumer
 * faults where the bundle has them, as a Powertools partial batch response.
 *
 * - FIFO: the batch is split by message group and the groups run side by side,
 *   each through its own SqsFifoPartialProcessorAsync: one record at a time
 *   within a group and, after a failure, the rest of that group failed untried
 *   (skipGroupOnError), so an entity's events are never applied out of order.
 *   Order is only promised within a group, so other groups need not wait: one
 *   slow entity no longer holds a batch of ten others behind it (a batch of 10
 *   groups took 10 sequential transactions before). The skipped records were
 *   never tried: they are made visible again at once (releaseSkipped).
 * - Standard: BatchProcessor handles the records in parallel and reports
 *   exactly the failed message ids.
 *
 * A batch in which every record failed is a partial response listing them all,
 * never a thrown error (throwOnFullBatchFailure false): thrown, it would skip
 * the release of skipped records (their group would stay locked for the whole
 * visibility timeout), throw away each record's own backoff, and count as a
 * function error, which is what the errors alarm watches.
 */
export function queueConsumerHandler<E extends EventEnvelope>(
  wiring: ConsumerWiring,
  consumer: QueueConsumer<E>,
): QueueConsumerHandler {
  const { settings } = wiring;
  const consume = (record: SQSRecord) =>
    consumeRecord(
      record,
      settings,
      consumer.parse,
      wiring.withFaults((event: E) => consumer.apply(event, record)),
    );

  return async (event, context) => {
    logger.addContext(context);
    await wiring.refreshFaults();
    try {
      if (!consumer.fifo) {
        return await processPartialResponse(event, consume, new BatchProcessor(EventType.SQS), {
          context,
          throwOnFullBatchFailure: false,
        });
      }
      const attempted = new Set<string>();
      const response = await processGroupsSideBySide(event, context, (record: SQSRecord) => {
        attempted.add(record.messageId);
        return consume(record);
      });
      await releaseSkipped(event, response, attempted, settings);
      return response;
    } finally {
      flushMetrics();
    }
  };
}

/**
 * One Powertools FIFO processor per message group, the groups concurrently;
 * the failures are reported in the batch's own record order. A processor holds
 * its batch's state, so each group gets a new one.
 */
async function processGroupsSideBySide(
  event: SQSEvent,
  context: Context,
  handle: (record: SQSRecord) => Promise<unknown>,
): Promise<SQSBatchResponse> {
  const groups = new Map<string, SQSRecord[]>();
  for (const record of event.Records) {
    const group = record.attributes.MessageGroupId ?? '';
    const records = groups.get(group) ?? [];
    records.push(record);
    groups.set(group, records);
  }
  const responses = await Promise.all(
    [...groups.values()].map((Records) =>
      processPartialResponse({ Records }, handle, new SqsFifoPartialProcessorAsync(), {
        context,
        skipGroupOnError: true,
        throwOnFullBatchFailure: false,
      }),
    ),
  );
  const failed = new Set(responses.flatMap((r) => r.batchItemFailures.map((f) => f.itemIdentifier)));
  return {
    batchItemFailures: event.Records.filter((r) => failed.has(r.messageId)).map((r) => ({
      itemIdentifier: r.messageId,
    })),
  };
}

/**
 * Records skipped behind a failure in their group were never tried: make them
 * visible again now instead of after the full visibility timeout. FIFO still
 * holds them back until the failed message ahead of them (invisible for its
 * backoff) is done, so the entity's events keep their order.
 */
async function releaseSkipped(
  event: SQSEvent,
  response: SQSBatchResponse,
  attempted: Set<string>,
  settings: ConsumerSettings,
): Promise<void> {
  const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
  const skipped = event.Records.filter((r) => failed.has(r.messageId) && !attempted.has(r.messageId));
  await Promise.all(
    skipped.map((r) =>
      settings.control
        .changeVisibility(r.receiptHandle, 0)
        .catch((error) => logger.warn('Could not release a skipped record', { error })),
    ),
  );
}
