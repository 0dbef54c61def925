import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { LedgerMismatchError } from '@exactly-once/runtime/aws/inbox-ledger';
import { DynamoDbSequencedEntityEffectLedger } from '@exactly-once/runtime/aws/sequenced-entity-effect-ledger';
import { consumerConfigFromEnv, consumerWiring } from '@exactly-once/runtime/wiring/consumer-wiring';
import { ENV } from '@exactly-once/runtime/env-names';
import { useUnitEnvironment } from '../support/handlers';
import { ProbeLedger } from './fixtures/probe-ledger';

const DOCUMENTS = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));

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

describe("a consumer's spec and its handler's ledger cannot disagree", () => {
  const wiringUnder = (ledger: 'inbox' | 'sequenced') => {
    process.env[ENV.dedupeHorizonSeconds] = '50';
    if (ledger === 'sequenced') process.env[ENV.consumerLedger] = 'sequenced';
    const config = consumerConfigFromEnv({ consumer: 'probe', fifo: false });
    return consumerWiring(config, { documents: DOCUMENTS, sqs: new SQSClient({ region: 'us-east-1' }) });
  };

  test("a spec naming 'sequenced' with an inbox ledger in its handler does not start: the horizon is gone and its claims expire", () => {
    const wiring = wiringUnder('sequenced');

    expect(() => new ProbeLedger(wiring.documents, wiring.ledgerOptions)).toThrow(LedgerMismatchError);
  });

  test('a spec naming the inbox (the default) with a sequenced ledger in its handler does not start either', () => {
    const wiring = wiringUnder('inbox');

    expect(() => new DynamoDbSequencedEntityEffectLedger(wiring.documents, wiring.ledgerOptions)).toThrow(
      'Consumer probe: its spec names the inbox ledger but its handler builds a sequenced ledger',
    );
  });

  test('each ledger starts under the spec that names it', () => {
    const sequenced = wiringUnder('sequenced');
    delete process.env[ENV.consumerLedger];
    const inbox = wiringUnder('inbox');

    expect(() => new DynamoDbSequencedEntityEffectLedger(sequenced.documents, sequenced.ledgerOptions)).not.toThrow();
    expect(() => new ProbeLedger(inbox.documents, inbox.ledgerOptions)).not.toThrow();
  });
});
