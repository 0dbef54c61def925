import { consumerConfigFromEnv } from '@exactly-once/runtime/wiring/consumer-wiring';
import { ENV } from '@exactly-once/runtime/env-names';
import { useUnitEnvironment } from '../support/handlers';

/**
 * A consumer's configuration from the environment the stack gives it (packages/cdk/src/consumer-pipelines.ts):
 * a sequenced consumer (CONSUMER_LEDGER=sequenced) gets no DEDUPE_HORIZON_SECONDS and applies an event of
 * any age, its claims never expiring; an inbox consumer without a horizon does not start.
 */

const WITHOUT_HORIZON = {
  [ENV.effectsTable]: 'effects',
  [ENV.providerLogTable]: 'provider-log',
  [ENV.inboxTtlSeconds]: '100',
  [ENV.queueUrl]: 'https://sqs.us-east-1.amazonaws.com/123456789012/probe.fifo',
  [ENV.deadLetterQueueUrl]: 'https://sqs.us-east-1.amazonaws.com/123456789012/probe-dlq.fifo',
};

beforeEach(() => {
  useUnitEnvironment(WITHOUT_HORIZON);
  delete process.env[ENV.dedupeHorizonSeconds];
  delete process.env[ENV.consumerLedger];
});

afterAll(() => {
  for (const name of [...Object.keys(WITHOUT_HORIZON), ENV.consumerLedger]) delete process.env[name];
});

test('a sequenced consumer has no horizon: it applies an event of any age', () => {
  process.env[ENV.consumerLedger] = 'sequenced';

  const config = consumerConfigFromEnv({ consumer: 'probe-fifo', fifo: true });

  expect(config.dedupeHorizonSeconds).toBe(Number.POSITIVE_INFINITY);
});

test('an inbox consumer without DEDUPE_HORIZON_SECONDS does not start: its claims expire', () => {
  const load = () => consumerConfigFromEnv({ consumer: 'probe-fifo', fifo: true });

  expect(load).toThrow(/DEDUPE_HORIZON_SECONDS/);
});
