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
import { consumerId, consumerOutputNames } from '@exactly-once/runtime/consumer-spec';
import { waitForDrain } from '@exactly-once/tools/proof-kit/drain';
import { seedDeadLetters, sendPoison, setLocalVisibility } from '@exactly-once/tools/proof-kit/faults';
import { queueName, sampledQueues } from '@exactly-once/tools/proof-kit/sampler';
import type { Target } from '@exactly-once/tools/proof-kit/target';
import { tooling as probeTooling } from '../support/probe-tooling';
import { PROBE_CONSUMERS, PROBE_FIFO_SPEC } from '../exactly-once/fixtures/probe-spec';

/**
 * The proof kit finds every consumer's queues from the consumer list and the
 * stack outputs (`consumerOutputNames`): a third consumer is drained, poisoned,
 * dead-lettered and sped up like the neutral fixture's two, FIFO or not by its spec.
 */
const sqs = mockClient(SQSClient);
const dynamodb = mockClient(DynamoDBClient);

// A FIFO third consumer that takes ThingUndone only. The outputs below are the probe consumers' and its own,
// so the kit runs with those three.
const audit = { ...PROBE_FIFO_SPEC, name: 'audit', eventTypes: ['ThingUndone'] };
const AUDIT_OUTPUTS = consumerOutputNames(audit.name);
const consumers = [...PROBE_CONSUMERS, audit];

const target = {
  kind: 'local',
  name: 'unit',
  region: 'us-east-1',
  apiUrl: 'http://127.0.0.1:1',
  outputs: {
    // The table the kit scans for the run's outbox events, under the output its domain names.
    [probeTooling.outboxTableOutput]: 'things',
    ProbeQueueUrl: 'probe',
    ProbeDlqUrl: 'probe-dlq',
    ProbeFifoQueueUrl: 'probe-fifo.fifo',
    ProbeFifoDlqUrl: 'probe-fifo-dlq.fifo',
    [AUDIT_OUTPUTS.queueUrl]: 'audit.fifo',
    [AUDIT_OUTPUTS.deadLetterQueueUrl]: 'audit-dlq.fifo',
  },
  callers: [],
  // The probe's domain with the third consumer: what the kit runs with unless a step is given its own list.
  domain: { ...probeTooling, consumers },
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
  expect(byQueue('probe-fifo.fifo')[1]).toMatchObject({ MessageGroupId: 'poison-run1-1' });
  expect(byQueue('probe')).toHaveLength(2);
  expect(byQueue('probe')[0].MessageGroupId).toBeUndefined();
  expect(byQueue('probe')[0].MessageDeduplicationId).toBeUndefined();
});

test('seeded dead letters go to the DLQ of every consumer whose spec takes the event, FIFO ones grouped by entity', async () => {
  sqs.on(SendMessageCommand).resolves({});
  const outbox = (event: Record<string, unknown>) => marshall({ entity: 'OUTBOX', event });
  dynamodb.on(ScanCommand).resolves({
    Items: [
      // An envelope, and an event written before the envelope (eventType/orderId, as the kit reads them).
      outbox({ eventId: 't1:happened', type: 'ThingHappened', entityId: 't1', payload: { ownerId: 'run1-o' } }),
      outbox({ eventId: 't1:undone', eventType: 'ThingUndone', orderId: 't1', ownerId: 'run1-o' }),
    ],
  });

  const count = await seedDeadLetters(target, 'run1', 10, consumers);

  expect(count).toBe(2);
  expect(sent().map((m) => [m.QueueUrl, JSON.parse(m.MessageBody!).eventId, m.MessageGroupId])).toEqual([
    ['probe-dlq', 't1:happened', undefined],
    ['probe-fifo-dlq.fifo', 't1:happened', 't1'],
    ['probe-fifo-dlq.fifo', 't1:undone', 't1'],
    ['audit-dlq.fifo', 't1:undone', 't1'],
  ]);
  expect(sent().find((m) => m.QueueUrl === 'audit-dlq.fifo')?.MessageDeduplicationId).toBe('dlq-seed-t1:undone');
});

test("the local visibility is shortened on every consumer's queue and put back afterwards", async () => {
  sqs.on(GetQueueAttributesCommand).resolves({ Attributes: { VisibilityTimeout: '180' } });
  sqs.on(SetQueueAttributesCommand).resolves({});

  const restore = await setLocalVisibility(target, 3, consumers);
  await restore();

  const set = sqs.commandCalls(SetQueueAttributesCommand).map((c) => c.args[0].input);
  expect(set.map((s) => [s.QueueUrl, s.Attributes?.VisibilityTimeout])).toEqual([
    ['probe', '3'],
    ['probe-fifo.fifo', '3'],
    ['audit.fifo', '3'],
    ['probe', '180'],
    ['probe-fifo.fifo', '180'],
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
    for (const url of ['probe', 'probe-fifo.fifo', 'audit.fifo']) depth(url, 0);
  });

  test("waits for the third consumer's queue too: messages still there mean not drained", async () => {
    depth('audit.fifo', 2);

    const result = await waitForDrain(target, { timeoutMs: 50, pollMs: 10, consumers });

    expect(result.drained).toBe(false);
    expect(result.state).toEqual({ pendingOutbox: 0, inFlightMessages: 2, queued: 2, received: 0 });
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
    'ProbeQueueUrl',
    'ProbeFifoQueueUrl',
    AUDIT_OUTPUTS.queueUrl,
    'ProbeDlqUrl',
    'ProbeFifoDlqUrl',
    AUDIT_OUTPUTS.deadLetterQueueUrl,
    'RelayFailureQueueUrl',
  ]);
  expect(sampledQueues(consumers).map(queueName).slice(2, 6)).toEqual([
    consumerId(audit.name),
    'Probe DLQ',
    'ProbeFifo DLQ',
    `${consumerId(audit.name)} DLQ`,
  ]);
});
