import { dynamoDbDocumentClient, sqsClient } from '../adapters/aws-clients';
import type { LedgerOptions } from '../adapters/dynamodb-ledgers';
import { DynamoDbTryCounter } from '../adapters/dynamodb-try-counter';
import { faultSourceFromEnv } from '../adapters/fault-sources';
import { OutageProneProvider } from '../adapters/outage-prone-provider';
import { RecordingProvider } from '../adapters/recording-provider';
import { SqsMessageControl } from '../adapters/sqs-message-control';
import { isContention } from '../adapters/transient-errors';
import { attemptsForBudget, RETRY_BUDGET, RETRY_ENV } from '../domain/backoff';
import { NO_FAULTS, type FaultPlan } from '../domain/faults';
import { optionalIntEnv, requireEnv, requireIntEnv } from '../shared/config';
import { metrics } from '../shared/observability';
import { IN_PROCESS_RETRY, type ConsumerSettings } from './consumer-support';

/**
 * What both queue consumers build at cold start from their environment: the
 * ledger options (inbox table and TTL), the provider log, the message control
 * for their own queue and DLQ, the retry settings, and the fault switch.
 */
export function consumerWiring(options: { consumer: string; fifo: boolean }) {
  const config = {
    effectsTable: requireEnv('EFFECTS_TABLE_NAME'),
    providerTable: requireEnv('PROVIDER_LOG_TABLE_NAME'),
    inboxTtlSeconds: requireIntEnv('INBOX_TTL_SECONDS'),
    queueUrl: requireEnv('QUEUE_URL'),
    deadLetterQueueUrl: requireEnv('DEAD_LETTER_QUEUE_URL'),
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
    // The stack sets these from RETRY_BUDGET; the defaults are the same numbers, for tests that set none.
    backoff: {
      baseSeconds: optionalIntEnv(RETRY_ENV.baseSeconds, RETRY_BUDGET.baseSeconds),
      capSeconds: optionalIntEnv(RETRY_ENV.capSeconds, RETRY_BUDGET.capSeconds),
    },
    inProcess: { ...IN_PROCESS_RETRY, isContention },
    tryLimit: options.fifo
      ? {
          maxAttempts: optionalIntEnv(RETRY_ENV.maxAttempts, attemptsForBudget(RETRY_BUDGET)),
          counter: new DynamoDbTryCounter(documents, {
            tableName: config.effectsTable,
            ttlSeconds: config.inboxTtlSeconds,
          }),
        }
      : undefined,
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
