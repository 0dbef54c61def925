import { processPartialResponse, SqsFifoPartialProcessorAsync } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { dynamoDbDocumentClient, sqsClient } from '../adapters/aws-clients';
import { DynamoDbFulfilmentLedger } from '../adapters/dynamodb-ledgers';
import { faultSourceFromEnv } from '../adapters/fault-sources';
import { RecordingProvider } from '../adapters/recording-provider';
import { SqsMessageControl } from '../adapters/sqs-message-control';
import { NO_FAULTS, type FaultPlan } from '../domain/faults';
import { optionalIntEnv, requireEnv, requireIntEnv } from '../shared/config';
import { flushMetrics, logger, metrics } from '../shared/observability';
import { fulfilOrderEvent } from '../use-cases/apply-order-events';
import { consumeRecord, type ConsumerSettings } from './consumer-support';

/**
 * FIFO consumer: reserves and releases stock. SqsFifoPartialProcessorAsync handles
 * records one at a time and, after a failure, fails the rest of that message
 * group (skipGroupOnError), so an order's events are never applied out of order.
 */
const config = {
  effectsTable: requireEnv('EFFECTS_TABLE_NAME'),
  providerTable: requireEnv('PROVIDER_LOG_TABLE_NAME'),
  inboxTtlSeconds: requireIntEnv('INBOX_TTL_SECONDS'),
  queueUrl: requireEnv('QUEUE_URL'),
  deadLetterQueueUrl: requireEnv('DEAD_LETTER_QUEUE_URL'),
  visibilityTimeoutSeconds: requireIntEnv('VISIBILITY_TIMEOUT_SECONDS'),
};

const documents = dynamoDbDocumentClient();
const faultSource = faultSourceFromEnv();
let faults: FaultPlan = NO_FAULTS;
const deps = {
  ledger: new DynamoDbFulfilmentLedger(documents, { tableName: config.effectsTable, inboxTtlSeconds: config.inboxTtlSeconds, unsafeDisableInbox: () => faults.disableInboxClaim?.includes(settings.consumer) === true }),
  warehouse: new RecordingProvider(documents, config.providerTable, 'warehouse'),
};
const settings: ConsumerSettings = {
  consumer: 'fulfilment',
  control: new SqsMessageControl(sqsClient(), { queueUrl: config.queueUrl, deadLetterQueueUrl: config.deadLetterQueueUrl, fifo: true }),
  backoff: { baseSeconds: optionalIntEnv('BACKOFF_BASE_SECONDS', 2), capSeconds: optionalIntEnv('BACKOFF_CAP_SECONDS', 60) },
  visibilityTimeoutSeconds: config.visibilityTimeoutSeconds,
};
metrics.setDefaultDimensions({ consumer: settings.consumer });

export const handler = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
  logger.addContext(context);
  faults = await faultSource.current();
  const processor = new SqsFifoPartialProcessorAsync();
  const attempted = new Set<string>();
  try {
    const response = await processPartialResponse(
      event,
      (record: SQSRecord) => {
        attempted.add(record.messageId);
        return consumeRecord(record, settings, (e) => fulfilOrderEvent(e, deps), faults);
      },
      processor,
      // Only the failed record's own group stops; other orders' groups go on.
      { context, skipGroupOnError: true },
    );
    await releaseSkipped(event, response, attempted);
    return response;
  } finally {
    flushMetrics();
  }
};

/**
 * Records skipped behind a failure in their group were never tried: make them
 * visible again now instead of after the full visibility timeout. FIFO still
 * holds them back until the failed message ahead of them (invisible for its
 * backoff) is done, so the order's events keep their order.
 */
async function releaseSkipped(event: SQSEvent, response: SQSBatchResponse, attempted: Set<string>): Promise<void> {
  const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
  const skipped = event.Records.filter((r) => failed.has(r.messageId) && !attempted.has(r.messageId));
  await Promise.all(
    skipped.map((r) =>
      settings.control.changeVisibility(r.receiptHandle, 0).catch((error) => logger.warn('Could not release a skipped record', { error })),
    ),
  );
}
