import { dynamoDbDocumentClient, sqsClient } from '../adapters/aws-clients';
import type { LedgerOptions } from '../adapters/dynamodb-ledgers';
import { DynamoDbTryCounter } from '../adapters/dynamodb-try-counter';
import { RecordingProvider } from '../adapters/recording-provider';
import { SqsMessageControl } from '../adapters/sqs-message-control';
import { isContention } from '../adapters/transient-errors';
import { attemptsForBudget, RETRY_BUDGET, RETRY_ENV } from '../domain/backoff';
import { consumerFaults, type Apply } from '../faults/consumer-faults';
import { inboxClaimDisabled } from '../faults/inbox-bypass';
import { optionalIntEnv, requireEnv, requireIntEnv } from '../shared/config';
import { metrics } from '../shared/observability';
import { IN_PROCESS_RETRY, type ConsumerSettings } from './consumer-support';

/**
 * What both queue consumers build at cold start from their environment: the
 * ledger options (inbox table and TTL), the provider log, the message control
 * for their own queue and DLQ, the retry settings, and, in bundles built with
 * fault injection only, the fault decorators (lambdas/faults).
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
  // Dead code, dropped with the fault modules, in every bundle built without fault injection (faults/build.ts).
  const faults = process.env.FAULT_INJECTION_BUILD === 'true' ? consumerFaults(options.consumer) : undefined;

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
    // The local runtime's test-only switch (faults/inbox-bypass.ts), read on every transaction. No deployable
    // bundle has it: the condition is false there, and the bundler drops the branch.
    ...(process.env.INBOX_BYPASS_BUILD === 'true' && faults !== undefined
      ? { unsafeDisableInbox: () => inboxClaimDisabled(faults.plan(), options.consumer) }
      : {}),
  };
  metrics.setDefaultDimensions({ consumer: options.consumer });

  return {
    documents,
    settings,
    ledgerOptions,
    /** The provider, behind the provider-outage fault where there is fault injection. */
    provider: (name: string) => {
      const provider = new RecordingProvider(documents, config.providerTable, name);
      return faults?.provider(provider, name) ?? provider;
    },
    /** The use case, inside the consumer faults where there is fault injection. */
    withFaults: <E extends { eventId: string }>(apply: Apply<E>): Apply<E> => faults?.apply(apply) ?? apply,
    /** Re-reads the fault plan (cached for a few seconds) where there is fault injection; once per invocation. */
    refreshFaults: async (): Promise<void> => {
      await faults?.refresh();
    },
  };
}
