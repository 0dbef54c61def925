import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { dynamoDbDocumentClient, sqsClient } from '../adapters/aws-clients';
import { DynamoDbLoyaltyLedger } from '../adapters/dynamodb-ledgers';
import { faultSourceFromEnv } from '../adapters/fault-sources';
import { RecordingProvider } from '../adapters/recording-provider';
import { SqsMessageControl } from '../adapters/sqs-message-control';
import { PermanentError } from '../domain/errors';
import { NO_FAULTS, type FaultPlan } from '../domain/faults';
import { optionalIntEnv, requireEnv, requireIntEnv } from '../shared/config';
import { flushMetrics, logger, metrics } from '../shared/observability';
import { creditLoyaltyPoints } from '../use-cases/apply-order-events';
import { consumeRecord, type ConsumerSettings } from './consumer-support';

/**
 * Standard-queue consumer: credits loyalty points and sends the confirmation
 * e-mail. Records are independent, so Powertools processes them in parallel and
 * reports exactly the failed message ids.
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
  ledger: new DynamoDbLoyaltyLedger(documents, { tableName: config.effectsTable, inboxTtlSeconds: config.inboxTtlSeconds, unsafeDisableInbox: () => faults.disableInboxClaim?.includes(settings.consumer) === true }),
  mail: new RecordingProvider(documents, config.providerTable, 'mail'),
};
const settings: ConsumerSettings = {
  consumer: 'loyalty',
  control: new SqsMessageControl(sqsClient(), { queueUrl: config.queueUrl, deadLetterQueueUrl: config.deadLetterQueueUrl, fifo: false }),
  backoff: { baseSeconds: optionalIntEnv('BACKOFF_BASE_SECONDS', 2), capSeconds: optionalIntEnv('BACKOFF_CAP_SECONDS', 300) },
  visibilityTimeoutSeconds: config.visibilityTimeoutSeconds,
};
metrics.setDefaultDimensions({ consumer: settings.consumer });

export const handler = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
  logger.addContext(context);
  faults = await faultSource.current();
  const processor = new BatchProcessor(EventType.SQS);
  try {
    return await processPartialResponse(
      event,
      (record: SQSRecord) =>
        consumeRecord(record, settings, (e) => {
          if (e.eventType !== 'OrderPlaced') {
            throw new PermanentError('UnknownEntity', `Loyalty consumes OrderPlaced only, got ${e.eventType}`);
          }
          return creditLoyaltyPoints(e, deps);
        }, faults),
      processor,
      { context },
    );
  } finally {
    flushMetrics();
  }
};
