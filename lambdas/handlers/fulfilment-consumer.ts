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
 * records one at a time and, after the first failure, fails the rest of that
 * message group, so an order's events are never applied out of order.
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
  try {
    return await processPartialResponse(event, (record: SQSRecord) => consumeRecord(record, settings, (e) => fulfilOrderEvent(e, deps), faults), processor, {
      context,
    });
  } finally {
    flushMetrics();
  }
};
