import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { parseCommand } from '../../ops/dlq/args';
import { main } from '../../ops/dlq/cli';
import type { DlqContext } from '../../ops/dlq/context';
import { redrive } from '../../ops/dlq/messages';
import { discoverDeadLetterQueues, findDeadLetterQueue, UsageError } from '../../ops/dlq/queues';
import { consumerSpec, CONSUMERS } from '../../lambdas/consumers';

const OUTPUTS = {
  ApiUrl: 'https://example/prod/',
  FulfilmentQueueUrl: 'https://sqs/1/fulfilment.fifo',
  FulfilmentDlqUrl: 'https://sqs/1/fulfilment-dlq.fifo',
  LoyaltyQueueUrl: 'https://sqs/1/loyalty',
  LoyaltyDlqUrl: 'https://sqs/1/loyalty-dlq',
  RelayFailureQueueUrl: 'https://sqs/1/relay-failures',
  SweeperDlqUrl: 'https://sqs/1/sweeper-dlq',
  OrdersTableName: 'Orders',
};

describe('argument parsing', () => {
  test.each([
    [[], /A command is required/],
    [['purge'], /Unknown command "purge"/],
    [['show'], /show needs a queue/],
    [['redrive'], /redrive needs a queue/],
    [['list', 'loyalty'], /list takes no queue/],
    [['list', '--max', '3'], /list takes only/],
    [['show', 'loyalty', '--dry-run'], /--dry-run is a redrive option/],
    [['show', 'loyalty', '--max', '0'], /--max must be a positive whole number/],
    [['redrive', 'loyalty', '--max', 'ten'], /--max must be a positive whole number/],
    [['redrive', 'loyalty', '--all', '--max', '5'], /--all and --max exclude each other/],
    [['redrive', 'fulfilment', '--cause', 'SchemaViolation'], /--include-poison/],
    [['redrive', 'loyalty', 'extra'], /Unexpected argument "extra"/],
    [['list', '--stak', 'x'], /Unknown option '--stak'/],
    [['list', '--stack', ''], /--stack needs a stack name/],
  ])('%j is a usage error (%s)', (argv, message) => {
    expect(() => parseCommand(argv)).toThrow(UsageError);
    expect(() => parseCommand(argv)).toThrow(message);
  });

  test('defaults: max 10, local target, text output, no poison, not a dry run', () => {
    expect(parseCommand(['redrive', 'loyalty'])).toEqual({
      command: 'redrive',
      queue: 'loyalty',
      max: 10,
      all: false,
      cause: undefined,
      includePoison: false,
      dryRun: false,
      stack: undefined,
      json: false,
    });
    expect(parseCommand(['show', 'relay-failures', '--max', '3', '--stack', 'Prod', '--json'])).toEqual({
      command: 'show',
      queue: 'relay-failures',
      max: 3,
      stack: 'Prod',
      json: true,
    });
  });
});

describe('exit codes', () => {
  const io = () => {
    const out: string[] = [];
    const err: string[] = [];
    const open = jest.fn<Promise<DlqContext>, []>();
    return { out, err, open, io: { out: (t: string) => out.push(t), err: (t: string) => err.push(t), open } };
  };

  test('a usage error exits 2 with the usage text, before any stack is opened', async () => {
    const run = io();

    const code = await main(['redrive', 'loyalty', '--max', '-1'], run.io);

    expect(code).toBe(2);
    expect(run.err.join('\n')).toMatch(/Usage: npm run dlq/);
    expect(run.open).not.toHaveBeenCalled();
  });

  test('--help exits 0 and prints the usage', async () => {
    const run = io();

    expect(await main(['--help'], run.io)).toBe(0);
    expect(run.out.join('\n')).toMatch(/Exit codes: 0 done, 1 something failed .*, 2 usage error/);
  });

  test('no stack to work on exits 1 with the reason', async () => {
    const run = io();
    run.open.mockRejectedValue(new Error('No .local/outputs.json: start the local runtime first (npm start)'));

    expect(await main(['list'], run.io)).toBe(1);
    expect(run.err.join('\n')).toMatch(/start the local runtime first/);
  });

  test('an unknown queue exits 2 and lists the queues the stack has', async () => {
    const run = io();
    const sqs = new SQSClient({ region: 'us-east-1' });
    run.open.mockResolvedValue({
      stack: { kind: 'local', name: 'S', outputs: OUTPUTS, endpoints: {} },
      sqs,
      close: () => sqs.destroy(),
    } as unknown as DlqContext);

    expect(await main(['show', 'orders'], run.io)).toBe(2);
    expect(run.err.join('\n')).toMatch(
      /Unknown DLQ "orders". This stack has: fulfilment, loyalty, relay-failures, sweeper/,
    );
  });
});

test('every DLQ is discovered from the outputs, each with what redrive does with it', () => {
  const queues = discoverDeadLetterQueues(OUTPUTS);

  expect(queues.map((q) => [q.name, q.kind, q.fifo, q.sourceUrl])).toEqual([
    ['fulfilment', 'consumer', true, OUTPUTS.FulfilmentQueueUrl],
    ['loyalty', 'consumer', false, OUTPUTS.LoyaltyQueueUrl],
    ['relay-failures', 'stream-pointers', false, undefined],
    ['sweeper', 'async-invoke', false, undefined],
  ]);
});

describe('consumer DLQs come from the consumer list', () => {
  // "tier-2" makes output names Tier2QueueUrl/Tier2DlqUrl: only its spec says what an operator types.
  const tier2 = { ...consumerSpec('fulfilment'), name: 'tier-2' };
  const withTier2 = {
    ...OUTPUTS,
    Tier2QueueUrl: 'https://sqs/1/tier-2.fifo',
    Tier2DlqUrl: 'https://sqs/1/tier-2-dlq.fifo',
  };

  test("a consumer on the list is found by the output names its spec derives, under the spec's name and FIFO-ness", () => {
    const queues = discoverDeadLetterQueues(withTier2, [...CONSUMERS, tier2]);

    expect(queues.find((q) => q.outputKey === 'Tier2DlqUrl')).toEqual({
      name: 'tier-2',
      outputKey: 'Tier2DlqUrl',
      url: withTier2.Tier2DlqUrl,
      fifo: true,
      kind: 'consumer',
      sourceUrl: withTier2.Tier2QueueUrl,
      redrivesTo: 'tier-2.fifo',
    });
    expect(findDeadLetterQueue(queues, 'tier-2', [...CONSUMERS, tier2]).url).toBe(withTier2.Tier2DlqUrl);
  });

  test('a consumer on the list that the stack does not output yet is a usage error that says so', () => {
    const queues = discoverDeadLetterQueues(OUTPUTS, [...CONSUMERS, tier2]);

    expect(() => findDeadLetterQueue(queues, 'tier-2', [...CONSUMERS, tier2])).toThrow(
      new UsageError(
        'The stack has no DLQ of consumer "tier-2" (no output Tier2DlqUrl): it was deployed before the consumer was added; deploy it again. This stack has: fulfilment, loyalty, relay-failures, sweeper',
      ),
    );
  });
});

describe('redrive on AWS (SDK mocked)', () => {
  const sqsMock = mockClient(SQSClient);
  const sqs = new SQSClient({ region: 'us-east-1' });
  const [fulfilment] = discoverDeadLetterQueues(OUTPUTS);
  const message = (id: string) => ({
    MessageId: id,
    ReceiptHandle: `rh-${id}`,
    Body: JSON.stringify({ eventId: `e-${id}` }),
    Attributes: { MessageGroupId: 'order-1', SentTimestamp: '0' },
    MessageAttributes: { failureCause: { DataType: 'String', StringValue: 'UnknownEntity' } },
  });
  beforeEach(() => {
    sqsMock.reset();
    sqsMock.on(GetQueueAttributesCommand).callsFake(({ QueueUrl }) => ({
      Attributes: { QueueArn: `arn:${QueueUrl}`, ApproximateNumberOfMessages: '7' },
    }));
    sqsMock.on(StartMessageMoveTaskCommand).resolves({ TaskHandle: 'task-1' });
    sqsMock.on(ChangeMessageVisibilityBatchCommand).resolves({});
    sqsMock.on(SendMessageCommand).resolves({});
    sqsMock.on(DeleteMessageCommand).resolves({});
  });

  test('a whole-queue redrive without filters is one StartMessageMoveTask to the source queue', async () => {
    const result = await redrive(sqs, fulfilment, {
      max: 10,
      all: true,
      includePoison: true,
      onAws: true,
      waitSeconds: 1,
    });

    expect(result).toMatchObject({ method: 'message-move-task', taskHandle: 'task-1', approximateMessages: 7 });
    expect(sqsMock.commandCalls(StartMessageMoveTaskCommand)[0].args[0].input).toEqual({
      SourceArn: `arn:${OUTPUTS.FulfilmentDlqUrl}`,
      DestinationArn: `arn:${OUTPUTS.FulfilmentQueueUrl}`,
    });
    expect(sqsMock.commandCalls(ReceiveMessageCommand)).toHaveLength(0);
  });

  test.each([
    ['a cause filter', { cause: 'InjectedPoison', includePoison: true }],
    ['poison left out', { includePoison: false }],
    ['a dry run', { includePoison: true, dryRun: true }],
  ])('with %s it moves message by message instead', async (_, filters) => {
    sqsMock.on(ReceiveMessageCommand).resolves({ Messages: [] });

    const result = await redrive(sqs, fulfilment, { max: 10, all: true, onAws: true, waitSeconds: 1, ...filters });

    expect(result.method).toBe('receive-send-delete');
    expect(sqsMock.commandCalls(StartMessageMoveTaskCommand)).toHaveLength(0);
  });

  test('a FIFO copy keeps its group and gets a fresh deduplication id each time it is redriven', async () => {
    // SQS keeps the message id when it moves a message after maxReceiveCount: the same id can come back.
    sqsMock
      .on(ReceiveMessageCommand)
      .resolvesOnce({ Messages: [message('m1')] })
      .resolvesOnce({ Messages: [] })
      .resolvesOnce({ Messages: [message('m1')] })
      .resolves({ Messages: [] });

    await redrive(sqs, fulfilment, { max: 10, waitSeconds: 0 });
    await redrive(sqs, fulfilment, { max: 10, waitSeconds: 0 });

    const sends = sqsMock.commandCalls(SendMessageCommand).map((c) => c.args[0].input);
    expect(sends.map((s) => s.MessageGroupId)).toEqual(['order-1', 'order-1']);
    expect(sends[0].MessageDeduplicationId).not.toEqual(sends[1].MessageDeduplicationId);
    expect(sqsMock.commandCalls(DeleteMessageCommand)).toHaveLength(2);
  });

  test('a pass that outlives its hold stops once a held message comes round again, instead of looping', async () => {
    const poison = {
      ...message('m3'),
      MessageAttributes: { failureCause: { DataType: 'String', StringValue: 'SchemaViolation' } },
    };
    // The same message comes back on every receive (bounded, so a looping pass ends and fails the assertion).
    let receives = 0;
    sqsMock.on(ReceiveMessageCommand).callsFake(() => ({ Messages: ++receives <= 50 ? [poison] : [] }));

    const result = await redrive(sqs, fulfilment, { max: 10, all: true, waitSeconds: 0 });

    expect(result.skipped).toEqual([{ messageId: 'm3', reason: expect.stringMatching(/^poison/) }]);
    expect(sqsMock.commandCalls(ReceiveMessageCommand)).toHaveLength(2);
  });

  test('a failed send leaves the message in the DLQ (visible again) and counts as failed', async () => {
    sqsMock
      .on(ReceiveMessageCommand)
      .resolvesOnce({ Messages: [message('m2')] })
      .resolves({ Messages: [] });
    sqsMock.on(SendMessageCommand).rejects(new Error('AccessDenied'));

    const result = await redrive(sqs, fulfilment, { max: 10, waitSeconds: 0 });

    expect(result.failed).toEqual([{ messageId: 'm2', error: 'AccessDenied' }]);
    expect(result.moved).toEqual([]);
    expect(sqsMock.commandCalls(DeleteMessageCommand)).toHaveLength(0);
    expect(sqsMock.commandCalls(ChangeMessageVisibilityBatchCommand)[0].args[0].input.Entries).toEqual([
      { Id: '0', ReceiptHandle: 'rh-m2', VisibilityTimeout: 0 },
    ]);
  });
});
