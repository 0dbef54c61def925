import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { EventEnvelope } from '@exactly-once/runtime/envelope';
import { lambdaContext } from '@exactly-once/runtime/testing/lambda-context';

/**
 * SQS batches as Lambda's event source mapping hands them to a consumer, and a driver that invokes a
 * handler with them the way Lambda does: up to `concurrency` invocations at once, each with one batch
 * whose records the handler runs as it likes (the mechanism's standard consumer and Powertools'
 * BatchProcessor run them side by side), each answering with a partial batch response.
 */
export type BatchHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

/** SQS's and Lambda's largest standard-queue batch without a batching window: what the shop's consumers are given. */
export const LAMBDA_BATCH_SIZE = 10;

/** One record per event (its JSON as the body), `batchSize` to a batch, in order; message ids are `<prefix>-<n>`. */
export function sqsBatches(events: readonly EventEnvelope[], batchSize: number, prefix: string): SQSEvent[] {
  if (!Number.isInteger(batchSize) || batchSize < 1)
    throw new Error(`bench: a batch size is a whole number >= 1, got ${batchSize}`);
  const now = String(Date.now());
  const records: SQSRecord[] = events.map((event, n) => ({
    messageId: `${prefix}-${n}`,
    receiptHandle: `${prefix}-${n}-receipt`,
    body: JSON.stringify(event),
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: now,
      SenderId: 'bench',
      ApproximateFirstReceiveTimestamp: now,
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:bench',
    awsRegion: 'us-east-1',
  }));
  const batches: SQSEvent[] = [];
  for (let i = 0; i < records.length; i += batchSize) batches.push({ Records: records.slice(i, i + batchSize) });
  return batches;
}

export interface BatchDriveReport {
  batches: number;
  /** Records handed to the handler, over every batch. */
  records: number;
  /** The message ids the handler reported failed (its partial batch responses), in the order given. */
  failed: string[];
  /** Wall-clock milliseconds from the first invocation to the last answer. */
  ms: number;
}

/**
 * Invokes `handler` once per batch, at most `concurrency` invocations in flight, each with a fresh Lambda
 * context of `invocationMs`; collects the failures each answer reports. A failed record is not
 * redelivered: the comparison measures the clean path, and a failure is a finding, reported.
 */
export async function driveBatches(
  handler: BatchHandler,
  batches: readonly SQSEvent[],
  options: { concurrency: number; invocationMs: number; requestPrefix?: string },
): Promise<BatchDriveReport> {
  const failed: string[] = [];
  let records = 0;
  let next = 0;
  const started = performance.now();
  const invoker = async () => {
    while (next < batches.length) {
      const i = next++;
      const batch = batches[i];
      records += batch.Records.length;
      const context = lambdaContext(options.invocationMs, { requestId: `${options.requestPrefix ?? 'bench'}-${i}` });
      const answer = await handler(batch, context);
      for (const { itemIdentifier } of answer.batchItemFailures) failed.push(itemIdentifier);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(options.concurrency, batches.length)) }, invoker));
  return { batches: batches.length, records, failed, ms: performance.now() - started };
}

/**
 * The batch handler a user writes around a per-record function with Powertools' batch utility: every
 * record of the batch side by side (BatchProcessor), failures reported per record. The plain consumer
 * and the Powertools-idempotency one are driven through it, as the mechanism's consumer is through
 * `queueConsumerHandler`.
 */
export function powertoolsBatchHandler(
  handleRecord: (event: EventEnvelope, record: SQSRecord) => Promise<unknown>,
  onInvocation?: (context: Context) => void,
): BatchHandler {
  return async (event, context) => {
    onInvocation?.(context);
    return processPartialResponse(
      event,
      (record: SQSRecord) => handleRecord(JSON.parse(record.body) as EventEnvelope, record),
      new BatchProcessor(EventType.SQS),
      { context, throwOnFullBatchFailure: false },
    );
  };
}
