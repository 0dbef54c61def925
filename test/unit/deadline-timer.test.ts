import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { consumerWiring } from '@exactly-once/runtime/wiring/consumer-wiring';
import { probeConsumerConfig } from '../support/probe-consumer-config';

const config = probeConsumerConfig();

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
