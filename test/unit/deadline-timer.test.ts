import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { consumerWiring, type ConsumerConfig } from '@exactly-once/runtime/wiring/consumer-wiring';

const config: ConsumerConfig = {
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
};

const timersKeepingTheProcessAlive = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

test("a record's deadline timer does not keep the process alive", () => {
  const documents = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
  const wiring = consumerWiring(config, { documents, sqs: new SQSClient({ region: 'us-east-1' }) });
  const before = timersKeepingTheProcessAlive();

  const clear = wiring.setTimer(60_000, () => undefined);
  const during = timersKeepingTheProcessAlive();
  clear();

  // A record whose batch threw never clears its deadline: held, it would keep a test worker (or a stopping
  // local function host) alive for the whole timeout.
  expect({ before, during }).toEqual({ before, during: before });
});
