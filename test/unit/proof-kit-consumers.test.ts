import { DynamoDBClient, QueryCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import {
  GetQueueAttributesCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
  SQSClient,
  type SendMessageCommandInput,
} from '@aws-sdk/client-sqs';
import { marshall } from '@aws-sdk/util-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { consumerSpec, CONSUMERS } from '../../lambdas/shop/consumers';
import { consumerId, consumerOutputNames } from '../../lambdas/exactly-once/consumer-spec';
import { waitForDrain } from '../../tools/proof-kit/drain';
import { seedDeadLetters, sendPoison, setLocalVisibility } from '../../tools/proof-kit/faults';
import { queueName, SAMPLED_QUEUES, sampledQueues } from '../../tools/proof-kit/sampler';
import type { Target } from '../../tools/proof-kit/target';
import { EXAMPLE_CONSUMERS, unusedConsumerName } from '../support/consumer-list';

/**
 * The proof kit finds every consumer's queues from the consumer list and the
 * stack outputs (`consumerOutputNames`): a third consumer is drained, poisoned,
 * dead-lettered and sped up like the two it ships with, FIFO or not by its spec.
 */
const sqs = mockClient(SQSClient);
const dynamodb = mockClient(DynamoDBClient);

// A FIFO third consumer that takes OrderCancelled only, named like no consumer on the list. The outputs below
// are the example consumers' and its own, so the kit runs with those three.
const audit = { ...consumerSpec('fulfilment'), name: unusedConsumerName('audit'), eventTypes: ['OrderCancelled'] };
const AUDIT_OUTPUTS = consumerOutputNames(audit.name);
const consumers = [...EXAMPLE_CONSUMERS, audit];

const target = {
  kind: 'local',
  name: 'unit',
  region: 'us-east-1',
  apiUrl: 'http://127.0.0.1:1',
  outputs: {
    OrdersTableName: 'orders',
    FulfilmentQueueUrl: 'fulfilment.fifo',
    FulfilmentDlqUrl: 'fulfilment-dlq.fifo',
    LoyaltyQueueUrl: 'loyalty',
    LoyaltyDlqUrl: 'loyalty-dlq',
    [AUDIT_OUTPUTS.queueUrl]: 'audit.fifo',
    [AUDIT_OUTPUTS.deadLetterQueueUrl]: 'audit-dlq.fifo',
  },
  callers: [],
  dynamodb: new DynamoDBClient({ region: 'us-east-1' }),
  sqs: new SQSClient({ region: 'us-east-1' }),
  close: () => undefined,
} satisfies Target;

const sent = (): SendMessageCommandInput[] => sqs.commandCalls(SendMessageCommand).map((c) => c.args[0].input);

beforeEach(() => {
  sqs.reset();
  dynamodb.reset();
});

test('poison goes to every consumer queue; a FIFO one gets a group and deduplication id, a standard one neither', async () => {
  sqs.on(SendMessageCommand).resolves({});

  const count = await sendPoison(target, 'run1', 2, consumers);

  expect(count).toBe(6);
  const byQueue = (url: string) => sent().filter((m) => m.QueueUrl === url);
  expect(byQueue('audit.fifo')).toHaveLength(2);
  expect(byQueue('audit.fifo')[0]).toMatchObject({
    MessageGroupId: 'poison-run1-0',
    MessageDeduplicationId: 'poison-run1-0',
  });
  expect(byQueue('fulfilment.fifo')[1]).toMatchObject({ MessageGroupId: 'poison-run1-1' });
  expect(byQueue('loyalty')).toHaveLength(2);
  expect(byQueue('loyalty')[0].MessageGroupId).toBeUndefined();
  expect(byQueue('loyalty')[0].MessageDeduplicationId).toBeUndefined();
});

test('seeded dead letters go to the DLQ of every consumer whose spec takes the event, FIFO ones grouped by entity', async () => {
  sqs.on(SendMessageCommand).resolves({});
  const outbox = (event: Record<string, unknown>) => marshall({ entity: 'OUTBOX', event });
  dynamodb.on(ScanCommand).resolves({
    Items: [
      // An envelope, and an event written before the envelope (eventType/orderId).
      outbox({ eventId: 'o1.placed', type: 'OrderPlaced', entityId: 'o1', payload: { customerId: 'run1-c' } }),
      outbox({ eventId: 'o1.cancelled', eventType: 'OrderCancelled', orderId: 'o1', customerId: 'run1-c' }),
    ],
  });

  const count = await seedDeadLetters(target, 'run1', 10, consumers);

  expect(count).toBe(2);
  expect(sent().map((m) => [m.QueueUrl, JSON.parse(m.MessageBody!).eventId, m.MessageGroupId])).toEqual([
    ['fulfilment-dlq.fifo', 'o1.placed', 'o1'],
    ['loyalty-dlq', 'o1.placed', undefined],
    ['fulfilment-dlq.fifo', 'o1.cancelled', 'o1'],
    ['audit-dlq.fifo', 'o1.cancelled', 'o1'],
  ]);
  expect(sent().find((m) => m.QueueUrl === 'audit-dlq.fifo')?.MessageDeduplicationId).toBe('dlq-seed-o1.cancelled');
});

test("the local visibility is shortened on every consumer's queue and put back afterwards", async () => {
  sqs.on(GetQueueAttributesCommand).resolves({ Attributes: { VisibilityTimeout: '180' } });
  sqs.on(SetQueueAttributesCommand).resolves({});

  const restore = await setLocalVisibility(target, 3, consumers);
  await restore();

  const set = sqs.commandCalls(SetQueueAttributesCommand).map((c) => c.args[0].input);
  expect(set.map((s) => [s.QueueUrl, s.Attributes?.VisibilityTimeout])).toEqual([
    ['fulfilment.fifo', '3'],
    ['loyalty', '3'],
    ['audit.fifo', '3'],
    ['fulfilment.fifo', '180'],
    ['loyalty', '180'],
    ['audit.fifo', '180'],
  ]);
});

describe('the drain', () => {
  const depth = (url: string, visible: number) =>
    sqs
      .on(GetQueueAttributesCommand, { QueueUrl: url })
      .resolves({ Attributes: { ApproximateNumberOfMessages: String(visible) } });

  beforeEach(() => {
    dynamodb.on(QueryCommand).resolves({ Count: 0 });
    for (const url of ['fulfilment.fifo', 'loyalty', 'audit.fifo']) depth(url, 0);
  });

  test("waits for the third consumer's queue too: messages still there mean not drained", async () => {
    depth('audit.fifo', 2);

    const result = await waitForDrain(target, { timeoutMs: 50, pollMs: 10, consumers });

    expect(result.drained).toBe(false);
    expect(result.state).toEqual({ pendingOutbox: 0, inFlightMessages: 2 });
  });

  test('drains once every consumer queue is empty twice in a row', async () => {
    const result = await waitForDrain(target, { timeoutMs: 5_000, pollMs: 10, consumers });

    expect(result.drained).toBe(true);
  });

  test('a consumer on the list whose queue the stack does not output is a clear error', async () => {
    const { [AUDIT_OUTPUTS.queueUrl]: _omitted, ...outputs } = target.outputs;

    await expect(waitForDrain({ ...target, outputs }, { timeoutMs: 50, consumers })).rejects.toThrow(
      `The stack has no output ${AUDIT_OUTPUTS.queueUrl}`,
    );
  });
});

test("the sampler's queues are every consumer's queue and DLQ by their output names, then the relay's failure queue", () => {
  expect(sampledQueues(consumers)).toEqual([
    'FulfilmentQueueUrl',
    'LoyaltyQueueUrl',
    AUDIT_OUTPUTS.queueUrl,
    'FulfilmentDlqUrl',
    'LoyaltyDlqUrl',
    AUDIT_OUTPUTS.deadLetterQueueUrl,
    'RelayFailureQueueUrl',
  ]);
  expect(sampledQueues(consumers).map(queueName).slice(2, 6)).toEqual([
    consumerId(audit.name),
    'Fulfilment DLQ',
    'Loyalty DLQ',
    `${consumerId(audit.name)} DLQ`,
  ]);
  // The deployed list: every consumer's queue and DLQ, and the chart names of the two shipped consumers are as
  // they were (besides them, the list holds whatever `npm run new:consumer` added).
  const added = CONSUMERS.filter((c) => !EXAMPLE_CONSUMERS.some((e) => e.name === c.name));
  const addedOutputs = new Set(added.flatMap((c) => Object.values(consumerOutputNames(c.name))));
  expect(SAMPLED_QUEUES).toHaveLength(2 * CONSUMERS.length + 1);
  expect(SAMPLED_QUEUES.filter((q) => !addedOutputs.has(q))).toEqual([
    'FulfilmentQueueUrl',
    'LoyaltyQueueUrl',
    'FulfilmentDlqUrl',
    'LoyaltyDlqUrl',
    'RelayFailureQueueUrl',
  ]);
});
