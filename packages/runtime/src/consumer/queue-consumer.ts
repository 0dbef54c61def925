import {
  BatchProcessor,
  EventType,
  processPartialResponse,
  SqsFifoPartialProcessorAsync,
} from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { createHash } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { beforeAbort } from '../runtime/abort';
import { DeadlineExceeded, invocationDeadlines, type RecordWork } from './record-work';
import type { EventEnvelope } from '../envelope';
import type { ApplyOutcome } from '../inbox/ports';
import { flushMetrics, logger } from '../runtime/observability';
import { consumeRecord, type ConsumerSettings } from './consume-record';

/**
 * What a queue consumer's handler runs a batch with: its settings, the records' timers and the fault
 * hooks. wiring/consumer-wiring.ts builds one on AWS (`ConsumerWiring`); the simulation on its own clients.
 *
 * @example
 * ```ts
 * const runtime: ConsumerRuntime = deployedConsumerWiring(SPEC);
 * ```
 */
export interface ConsumerRuntime {
  /** The consumer's name, message control, backoff, dedupe horizon, try limit and clock. */
  readonly settings: ConsumerSettings;
  /** Re-reads the fault plan where there is fault injection; called once per invocation. */
  refreshFaults(): Promise<void>;
  /** Starts a timer that calls `fire` after `ms`, returning its cancel: the records' deadlines. */
  setTimer(ms: number, fire: () => void): () => void;
  /** The use case, inside the consumer faults where there is fault injection. */
  withFaults<T extends { eventId: string }>(
    apply: (event: T, work: RecordWork) => Promise<ApplyOutcome>,
  ): (event: T, work: RecordWork) => Promise<ApplyOutcome>;
}

/**
 * What makes one queue consumer differ from another: its queue type, its event and its use case.
 *
 * @example A loyalty consumer's: a standard queue, OrderPlaced only
 * ```ts
 * const loyalty: QueueConsumer<OrderEvent> = {
 *   fifo: SPEC.fifo,
 *   parse: parseOrderEvent,
 *   apply: (event, _record, work) => {
 *     if (event.type !== 'OrderPlaced') throw new PermanentError('UnsupportedEventType', `Loyalty consumes OrderPlaced only, got ${event.type}`);
 *     return creditLoyaltyPoints(event, { ledger, mail }, work);
 *   },
 * };
 * ```
 */
export interface QueueConsumer<E extends EventEnvelope> {
  /** The spec's `fifo`: the processor must match the queue the stack gives the consumer. */
  fifo: boolean;
  /** A message body as this consumer's event; throws a PermanentError on a body it can never use. */
  parse(body: string): E;
  /**
   * The use case on one event, within `work` (its deadline's signal for every
   * call, its provider-call lease); `record` is the SQS record it came in, for a use case that
   * needs its message id or attributes.
   */
  apply(event: E, record: SQSRecord, work: RecordWork): Promise<ApplyOutcome>;
}

/**
 * A queue consumer's Lambda handler: an SQS batch in, a partial batch response (the failed message ids) out.
 *
 * @example A consumer's deployed binding (`handlers/<name>.ts`), its factory module apart
 * ```ts
 * import { makeHandler, partsFromEnv } from '../entry-points/loyalty-consumer';
 *
 * export const handler: QueueConsumerHandler = makeHandler(partsFromEnv());
 * ```
 */
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
 * Deadline: every record gets one (invocationDeadlines), with an AbortSignal
 * for its calls; a record not done by then is failed like a transient error
 * (try counted, backoff set), and a FIFO record whose turn comes after it is
 * not started but released like a skipped one, so the batch answers before the
 * timeout and one hung call cannot hold every group's records for the whole
 * visibility timeout.
 *
 * A batch in which every record failed is a partial response listing them all,
 * never a thrown error (throwOnFullBatchFailure false): thrown, it would skip
 * the release of skipped records (their group would stay locked for the whole
 * visibility timeout), throw away each record's own backoff, and count as a
 * function error, which is what the errors alarm watches.
 *
 * @example A FIFO consumer's entry module: a factory; its deployed binding, a module of its own, is `makeHandler(partsFromEnv())`
 * ```ts
 * import { type ConsumerWiring, deployedConsumerWiring, queueConsumerHandler } from '..';
 * import { FULFILMENT as SPEC } from '../consumers'; // its ConsumerSpec in the application's list
 *
 * export function makeHandler(wiring: ConsumerWiring) {
 *   const ledger = new DynamoDbFulfilmentLedger(wiring.documents, wiring.ledgerOptions);
 *   const warehouse = wiring.provider('warehouse');
 *   return queueConsumerHandler(wiring, {
 *     fifo: SPEC.fifo,
 *     parse: parseOrderEvent,
 *     apply: (event, _record, work) => fulfilOrderEvent(event, { ledger, warehouse }, work),
 *   });
 * }
 * export function partsFromEnv(): ConsumerWiring {
 *   return deployedConsumerWiring(SPEC);
 * }
 * ```
 */
export function queueConsumerHandler<E extends EventEnvelope>(
  wiring: ConsumerRuntime,
  consumer: QueueConsumer<E>,
): QueueConsumerHandler {
  const { settings } = wiring;

  return async (event, context) => {
    logger.addContext(context);
    await wiring.refreshFaults();
    const startedAt = settings.now().getTime();
    const { deadline, answerBy, leaseUntil } = invocationDeadlines(startedAt, context.getRemainingTimeInMillis());
    const controller = new AbortController();
    const answer = new AbortController();
    // One listener per record and per SDK call in flight: more than Node's default of 10 is expected here.
    setMaxListeners(1_000, controller.signal, answer.signal);
    const cancelTimers = [
      wiring.setTimer(deadline - startedAt, () => controller.abort(new DeadlineExceeded(deadline))),
      wiring.setTimer(answerBy - startedAt, () => answer.abort(new DeadlineExceeded(answerBy))),
    ];
    const consume = (record: SQSRecord) => {
      const work: RecordWork = {
        signal: controller.signal,
        deadline,
        recordingSignal: answer.signal,
        leaseUntil,
        leaseHolder: leaseHolderOf(context.awsRequestId, record),
        recordings: new Set(),
      };
      return beforeAbort(
        consumeRecord(
          record,
          settings,
          consumer.parse,
          wiring.withFaults((e: E, w: RecordWork) => consumer.apply(e, record, w)),
          work,
        ),
        answer.signal,
      );
    };
    try {
      if (!consumer.fifo) {
        return await processPartialResponse(event, consume, new BatchProcessor(EventType.SQS), {
          context,
          throwOnFullBatchFailure: false,
        });
      }
      const attempted = new Set<string>();
      const response = await processGroupsSideBySide(event, context, (record: SQSRecord) => {
        // Its turn came after the deadline: not tried, so not counted; released with the skipped ones.
        if (controller.signal.aborted) return Promise.reject(new DeadlineExceeded(deadline));
        attempted.add(record.messageId);
        return consume(record);
      });
      await beforeAbort(releaseSkipped(event, response, attempted, settings), answer.signal).catch(() =>
        logger.warn('Releasing skipped records did not finish in time: they come back after their visibility timeout'),
      );
      return response;
    } finally {
      for (const cancel of cancelTimers) cancel();
      flushMetrics();
    }
  };
}

/**
 * The lease holder (and token seed) of one record's try: the invocation's request id and a hash of the
 * record's receipt handle. Never the message id: two receipts of one message can come in one batch
 * (client-side batching, a visibility lapse), and under one holder both would be "this try": the
 * second copy's transaction would carry the first one's token and succeed as its commit, and its lease
 * would count as its own, so both would be applied and both would call the provider.
 *
 * @example
 * ```ts
 * leaseHolderOf('request-1', record); // 'request-1:3f2a...' (16 hex characters of the receipt's hash)
 * ```
 */
export function leaseHolderOf(awsRequestId: string, record: Pick<SQSRecord, 'receiptHandle'>): string {
  return `${awsRequestId}:${createHash('sha256').update(record.receiptHandle).digest('hex').slice(0, 16)}`;
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
