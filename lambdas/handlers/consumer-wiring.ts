import { dynamoDbDocumentClient, sqsClient } from '../adapters/aws-clients';
import type { LedgerOptions } from '../adapters/dynamodb-ledgers';
import { faultSourceFromEnv } from '../adapters/fault-sources';
import { OutageProneProvider } from '../adapters/outage-prone-provider';
import { RecordingProvider } from '../adapters/recording-provider';
import { SqsMessageControl } from '../adapters/sqs-message-control';
import { NO_FAULTS, type FaultPlan } from '../domain/faults';
import { optionalIntEnv, requireEnv, requireIntEnv } from '../shared/config';
import { metrics } from '../shared/observability';
import type { ConsumerSettings } from './consumer-support';

/**
 * What both queue consumers build at cold start from their environment: the
 * ledger options (inbox table and TTL), the provider log, the message control
 * for their own queue and DLQ, the backoff, and the fault switch.
 */
export function consumerWiring(options: { consumer: string; fifo: boolean; backoffCapSeconds: number }) {
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

  const settings: ConsumerSettings = {
    consumer: options.consumer,
    control: new SqsMessageControl(sqsClient(), {
      queueUrl: config.queueUrl,
      deadLetterQueueUrl: config.deadLetterQueueUrl,
      fifo: options.fifo,
    }),
    backoff: {
      baseSeconds: optionalIntEnv('BACKOFF_BASE_SECONDS', 2),
      capSeconds: optionalIntEnv('BACKOFF_CAP_SECONDS', options.backoffCapSeconds),
    },
    visibilityTimeoutSeconds: config.visibilityTimeoutSeconds,
  };
  const ledgerOptions: LedgerOptions = {
    tableName: config.effectsTable,
    inboxTtlSeconds: config.inboxTtlSeconds,
    // Test-only switch of the proof kit (see domain/faults.ts): read on every transaction.
    unsafeDisableInbox: () => faults.disableInboxClaim?.includes(options.consumer) === true,
  };
  metrics.setDefaultDimensions({ consumer: options.consumer });

  return {
    documents,
    settings,
    ledgerOptions,
    // The proof kit's provider-outage fault sits in front of the provider; without a plan it only forwards.
    provider: (name: string) =>
      new OutageProneProvider(new RecordingProvider(documents, config.providerTable, name), name, () => faults),
    /** Re-reads the fault switch (cached for a few seconds); call once per invocation. */
    refreshFaults: async (): Promise<FaultPlan> => (faults = await faultSource.current()),
  };
}
