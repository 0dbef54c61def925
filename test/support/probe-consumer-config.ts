import type { ConsumerConfig } from '@exactly-once/runtime/wiring/consumer-wiring';

/**
 * A standard-queue consumer's configuration as `consumerConfigFromEnv` would read it, for tests that build
 * a consumer's wiring without an environment; `backoff` is the deployed one unless given.
 */
export function probeConsumerConfig(overrides: Partial<ConsumerConfig> = {}): ConsumerConfig {
  return {
    consumer: 'probe',
    fifo: false,
    effectsTable: 'effects',
    providerTable: 'provider-log',
    inboxTtlSeconds: 1_000,
    dedupeHorizonSeconds: 500,
    queueUrl: 'https://sqs.us-east-1.amazonaws.com/1/probe',
    deadLetterQueueUrl: 'https://sqs.us-east-1.amazonaws.com/1/probe-dlq',
    backoff: { baseSeconds: 2, capSeconds: 300 },
    maxAttempts: 5,
    ...overrides,
  };
}
