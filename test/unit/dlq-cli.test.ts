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
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseCommand, usage } from '@exactly-once/tools/dlq/args';
import { main } from '@exactly-once/tools/dlq/cli';
import { shown, type ListReport, type RedriveReport, type ShowReport } from '@exactly-once/tools/dlq/commands';
import type { DlqContext } from '@exactly-once/tools/dlq/context';
import { formatReport } from '@exactly-once/tools/dlq/format';
import {
  describeHorizon,
  judgeHorizon,
  ORIGINAL_OCCURRED_AT,
  PAST_HORIZON_RUNBOOK,
  withFreshOccurredAt,
} from '@exactly-once/tools/dlq/horizon';
import { causeOf } from '@exactly-once/tools/dlq/causes';
import { eventKeyOf } from '@exactly-once/tools/dlq/inventory';
import { redrive, redriveDecision, type DeadLetter } from '@exactly-once/tools/dlq/messages';
import { pastHorizonReason, stillInFutureReason } from '@exactly-once/tools/dlq/redrive-reasons';
import { discoverDeadLetterQueues, findDeadLetterQueue, UsageError } from '@exactly-once/tools/dlq/queues';
import { PROVIDER_KEY_WINDOW_REASON } from '@exactly-once/tools/dlq/provider-window';
import { PROBE_CONSUMERS, PROBE_FIFO_SPEC } from '../exactly-once/fixtures/probe-spec';
import { exampleDomain } from '../support/example-domain';

/** The domain the tool is handed, as its entry point loads it: the example's. */
const DOMAIN = exampleDomain();
const { isEvent } = DOMAIN;
const USAGE = usage(DOMAIN.consumers);

const OUTPUTS = {
  ApiUrl: 'https://example/prod/',
  ProbeFifoQueueUrl: 'https://sqs/1/probe-fifo.fifo',
  ProbeFifoDlqUrl: 'https://sqs/1/probe-fifo-dlq.fifo',
  ProbeQueueUrl: 'https://sqs/1/probe',
  ProbeDlqUrl: 'https://sqs/1/probe-dlq',
  RelayFailureQueueUrl: 'https://sqs/1/relay-failures',
  SweeperDlqUrl: 'https://sqs/1/sweeper-dlq',
  ThingsTableName: 'Things',
};

/** The FIFO probe consumer's DLQ, as the tool discovers it from the outputs. */
const fifoDlqOf = (outputs: Record<string, string>) =>
  discoverDeadLetterQueues(outputs, PROBE_CONSUMERS).find((q) => q.name === 'probe-fifo')!;

describe('argument parsing', () => {
  test.each([
    [[], /A command is required/],
    [['purge'], /Unknown command "purge"/],
    [['show'], /show needs a queue/],
    [['redrive'], /redrive needs a queue/],
    [['list', 'probe'], /list takes no queue/],
    [['list', '--max', '3'], /list takes only/],
    [['show', 'probe', '--dry-run'], /--dry-run is a redrive option/],
    [['show', 'probe', '--max', '0'], /--max must be a positive whole number/],
    [['redrive', 'probe', '--max', 'ten'], /--max must be a positive whole number/],
    [['redrive', 'probe', '--all', '--max', '5'], /--all and --max exclude each other/],
    [['redrive', 'probe-fifo', '--cause', 'SchemaViolation'], /--include-poison/],
    [['redrive', 'probe', 'extra'], /Unexpected argument "extra"/],
    [['list', '--stak', 'x'], /Unknown option '--stak'/],
    [['list', '--stack', ''], /--stack needs a stack name/],
    [['show', 'probe', '--past-horizon', 'e-1'], /--past-horizon is a redrive option/],
    [['list', '--past-horizon', 'e-1'], /list takes only/],
    [['redrive', 'probe', '--past-horizon'], /argument missing/],
    [['redrive', 'probe', '--past-horizon', '--dry-run'], /argument is ambiguous/],
    [['redrive', 'probe', '--past-horizon', 'e-1,'], /--past-horizon needs the eventIds/],
  ])('%j is a usage error (%s)', (argv, message) => {
    expect(() => parseCommand(argv)).toThrow(UsageError);
    expect(() => parseCommand(argv)).toThrow(message);
  });

  test('defaults: max 10, local target, text output, no poison, not a dry run', () => {
    expect(parseCommand(['redrive', 'probe'])).toEqual({
      command: 'redrive',
      queue: 'probe',
      max: 10,
      all: false,
      cause: undefined,
      includePoison: false,
      pastHorizon: [],
      providerFindings: {},
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

test('--provider-performed and --provider-not-performed name events by what was found at the provider; never one event both', () => {
  const command = parseCommand([
    'redrive',
    'probe',
    '--provider-performed',
    'e-1,e-2',
    '--provider-not-performed',
    'e-3',
  ]);

  expect(command).toMatchObject({
    providerFindings: { 'e-1': 'performed', 'e-2': 'performed', 'e-3': 'not-performed' },
  });
  expect(() =>
    parseCommand(['redrive', 'probe', '--provider-performed', 'e-1', '--provider-not-performed', 'e-1']),
  ).toThrow('e-1 is named both --provider-performed and --provider-not-performed');
  expect(() => parseCommand(['redrive', 'probe', '--provider-performed', ' '])).toThrow(
    /^--provider-performed needs the eventIds whose provider call you found performed/,
  );
  expect(() => parseCommand(['show', 'probe', '--provider-not-performed', 'e-1'])).toThrow(
    '--provider-not-performed is a redrive option',
  );
});

test('--past-horizon names events, comma-separated or repeated, each once; it is for redrive only', () => {
  expect(
    parseCommand(['redrive', 'probe', '--past-horizon', 'e-1, e-2', '--past-horizon', 'e-1', '--all', '--dry-run']),
  ).toMatchObject({ command: 'redrive', all: true, dryRun: true, pastHorizon: ['e-1', 'e-2'] });
});

test('the usage says what --past-horizon does and what a person must check first, and names a runbook section that exists', () => {
  expect(USAGE).toMatch(/redrive <queue> .*\[--past-horizon ID,\.\.\.\]/);
  expect(USAGE).toContain(
    'only after checking that the effect was NOT applied (its inbox claim may be gone, so the consumer cannot tell)',
  );
  expect(USAGE).toMatch(/occurredAt set to now \(the original\s+kept in the message attribute originalOccurredAt\)/);
  expect(USAGE).toContain(PAST_HORIZON_RUNBOOK);
  // The section, by GitHub's anchor rules (as test/infra/runbook.test.ts computes them).
  const runbook = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'runbook.md'), 'utf8');
  const anchors = [...runbook.matchAll(/^#{1,6}\s+(.+?)\s*$/gm)].map(([, heading]) =>
    heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .trim()
      .replace(/\s/g, '-'),
  );
  expect(anchors).toContain(PAST_HORIZON_RUNBOOK.split('#')[1]);
});

describe('exit codes', () => {
  const io = () => {
    const out: string[] = [];
    const err: string[] = [];
    const open = jest.fn<Promise<DlqContext>, []>();
    return {
      out,
      err,
      open,
      io: { domain: DOMAIN, out: (t: string) => out.push(t), err: (t: string) => err.push(t), open },
    };
  };

  test('a usage error exits 2 with the usage text, before any stack is opened', async () => {
    const run = io();

    const code = await main(['redrive', 'probe', '--max', '-1'], run.io);

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
      domain: DOMAIN,
      sqs,
      close: () => sqs.destroy(),
    } as unknown as DlqContext);

    expect(await main(['show', 'things'], run.io)).toBe(2);
    expect(run.err.join('\n')).toMatch(
      /Unknown DLQ "things". This stack has: probe, probe-fifo, relay-failures, sweeper/,
    );
  });
});

test('every DLQ is discovered from the outputs, each with what redrive does with it', () => {
  const queues = discoverDeadLetterQueues(OUTPUTS, PROBE_CONSUMERS);

  expect(queues.map((q) => [q.name, q.kind, q.fifo, q.sourceUrl])).toEqual([
    ['probe', 'consumer', false, OUTPUTS.ProbeQueueUrl],
    ['probe-fifo', 'consumer', true, OUTPUTS.ProbeFifoQueueUrl],
    ['relay-failures', 'stream-pointers', false, undefined],
    ['sweeper', 'async-invoke', false, undefined],
  ]);
});

describe('consumer DLQs come from the consumer list', () => {
  // "tier-2" makes output names Tier2QueueUrl/Tier2DlqUrl: only its spec says what an operator types.
  const tier2 = { ...PROBE_FIFO_SPEC, name: 'tier-2' };
  const withTier2 = {
    ...OUTPUTS,
    Tier2QueueUrl: 'https://sqs/1/tier-2.fifo',
    Tier2DlqUrl: 'https://sqs/1/tier-2-dlq.fifo',
  };

  test("a consumer on the list is found by the output names its spec derives, under the spec's name and FIFO-ness", () => {
    const queues = discoverDeadLetterQueues(withTier2, [...PROBE_CONSUMERS, tier2]);

    expect(queues.find((q) => q.outputKey === 'Tier2DlqUrl')).toEqual({
      name: 'tier-2',
      outputKey: 'Tier2DlqUrl',
      url: withTier2.Tier2DlqUrl,
      fifo: true,
      kind: 'consumer',
      sourceUrl: withTier2.Tier2QueueUrl,
      redrivesTo: 'tier-2.fifo',
      // Its spec names no ledger: the inbox, where a provider finding is written.
      ledger: 'inbox',
    });
    expect(findDeadLetterQueue(queues, 'tier-2', [...PROBE_CONSUMERS, tier2]).url).toBe(withTier2.Tier2DlqUrl);
  });

  test('a consumer on the list that the stack does not output yet is a usage error that says so', () => {
    const queues = discoverDeadLetterQueues(OUTPUTS, [...PROBE_CONSUMERS, tier2]);

    expect(() => findDeadLetterQueue(queues, 'tier-2', [...PROBE_CONSUMERS, tier2])).toThrow(
      new UsageError(
        'The stack has no DLQ of consumer "tier-2" (no output Tier2DlqUrl): it was deployed before the consumer was added; deploy it again. This stack has: probe, probe-fifo, relay-failures, sweeper',
      ),
    );
  });
});

describe('redrive on AWS (SDK mocked)', () => {
  const sqsMock = mockClient(SQSClient);
  const sqs = new SQSClient({ region: 'us-east-1' });
  const fifoQueue = fifoDlqOf(OUTPUTS);
  const message = (id: string) => ({
    MessageId: id,
    ReceiptHandle: `rh-${id}`,
    Body: JSON.stringify({ eventId: `e-${id}` }),
    Attributes: { MessageGroupId: 'thing-1', SentTimestamp: '0' },
    MessageAttributes: { failureCause: { DataType: 'String', StringValue: 'UnsupportedEventType' } },
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
    const result = await redrive(sqs, fifoQueue, {
      isEvent,
      max: 10,
      all: true,
      includePoison: true,
      onAws: true,
      waitSeconds: 1,
    });

    expect(result).toMatchObject({ method: 'message-move-task', taskHandle: 'task-1', approximateMessages: 7 });
    expect(sqsMock.commandCalls(StartMessageMoveTaskCommand)[0].args[0].input).toEqual({
      SourceArn: `arn:${OUTPUTS.ProbeFifoDlqUrl}`,
      DestinationArn: `arn:${OUTPUTS.ProbeFifoQueueUrl}`,
    });
    expect(sqsMock.commandCalls(ReceiveMessageCommand)).toHaveLength(0);
  });

  test.each([
    ['a cause filter', { cause: 'InjectedPoison', includePoison: true }],
    ['poison left out', { includePoison: false }],
    ['a dry run', { includePoison: true, dryRun: true }],
  ])('with %s it moves message by message instead', async (_, filters) => {
    sqsMock.on(ReceiveMessageCommand).resolves({ Messages: [] });

    const result = await redrive(sqs, fifoQueue, {
      isEvent,
      max: 10,
      all: true,
      onAws: true,
      waitSeconds: 1,
      ...filters,
    });

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

    await redrive(sqs, fifoQueue, { isEvent, max: 10, waitSeconds: 0 });
    await redrive(sqs, fifoQueue, { isEvent, max: 10, waitSeconds: 0 });

    const sends = sqsMock.commandCalls(SendMessageCommand).map((c) => c.args[0].input);
    expect(sends.map((s) => s.MessageGroupId)).toEqual(['thing-1', 'thing-1']);
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

    const result = await redrive(sqs, fifoQueue, { isEvent, max: 10, all: true, waitSeconds: 0 });

    expect(result.skipped).toEqual([{ messageId: 'm3', reason: expect.stringMatching(/^poison/) }]);
    expect(sqsMock.commandCalls(ReceiveMessageCommand)).toHaveLength(2);
  });

  test('a failed send leaves the message in the DLQ (visible again) and counts as failed', async () => {
    sqsMock
      .on(ReceiveMessageCommand)
      .resolvesOnce({ Messages: [message('m2')] })
      .resolves({ Messages: [] });
    sqsMock.on(SendMessageCommand).rejects(new Error('AccessDenied'));

    const result = await redrive(sqs, fifoQueue, { isEvent, max: 10, waitSeconds: 0 });

    expect(result.failed).toEqual([{ messageId: 'm2', error: 'AccessDenied' }]);
    expect(result.moved).toEqual([]);
    expect(sqsMock.commandCalls(DeleteMessageCommand)).toHaveLength(0);
    expect(sqsMock.commandCalls(ChangeMessageVisibilityBatchCommand)[0].args[0].input.Entries).toEqual([
      { Id: '0', ReceiptHandle: 'rh-m2', VisibilityTimeout: 0 },
    ]);
  });
});

describe('the dedupe horizon', () => {
  const HORIZON = 21 * 86_400; // ProbeFifoDedupeHorizonSeconds today
  const NOW = new Date('2026-12-01T10:00:00Z');
  const daysBefore = (n: number) => new Date(NOW.getTime() - n * 86_400_000).toISOString();
  const envelope = (eventId: string, occurredAt: unknown) =>
    JSON.stringify({ eventId, type: 'ThingHappened', entityId: 'thing-1', version: 1, occurredAt, payload: {} });
  const deadLetter = (id: string, body: string, attributes: Record<string, string> = {}): DeadLetter => ({
    messageId: id,
    receiptHandle: `rh-${id}`,
    body,
    groupId: 'thing-1',
    attributes: { failureCause: 'DedupeHorizonPassed', consumer: 'probe-fifo', attempt: '1', ...attributes },
  });

  describe('judging a message by its envelope occurredAt, as the consumer does', () => {
    test.each([
      ['60 days old', envelope('e', '2026-10-02T10:00:00Z'), 'past', 60 * 86_400],
      ['3 days old', envelope('e', daysBefore(3)), 'within', 3 * 86_400],
      ['exactly the horizon old (the consumer refuses only older)', envelope('e', daysBefore(21)), 'within', HORIZON],
      [
        'a second past the horizon',
        envelope('e', new Date(NOW.getTime() - HORIZON * 1000 - 1000).toISOString()),
        'past',
        HORIZON + 1,
      ],
      ['ahead of the clock', envelope('e', '2026-12-01T10:01:00Z'), 'within', -60],
    ])('%s: %s', (_, body, horizon, ageSeconds) => {
      expect(judgeHorizon(body, HORIZON, NOW)).toEqual({
        occurredAt: JSON.parse(body).occurredAt,
        ageSeconds,
        dedupeHorizonSeconds: HORIZON,
        horizon,
      });
    });

    test.each([
      ['not JSON', 'not json'],
      ['JSON but no object', '[1,2]'],
      ['no occurredAt', JSON.stringify({ eventId: 'e' })],
      ['occurredAt no timestamp', envelope('e', 'last tuesday')],
      ['occurredAt no string', envelope('e', 1764583200000)],
    ])('%s: unknown age', (_, body) => {
      expect(judgeHorizon(body, HORIZON, NOW)).toEqual({ dedupeHorizonSeconds: HORIZON, horizon: 'unknown' });
    });

    test('a stack without the horizon output: the age is known, the judgement is not', () => {
      expect(judgeHorizon(envelope('e', daysBefore(60)), undefined, NOW)).toMatchObject({
        ageSeconds: 60 * 86_400,
        horizon: 'unknown',
      });
    });
  });

  test("show's line: occurredAt, the age in days and the horizon, PAST in capitals", () => {
    const line = (body: string) => describeHorizon(judgeHorizon(body, HORIZON, NOW));

    expect(line(envelope('e', '2026-10-01T05:12:00Z'))).toBe(
      `occurredAt 2026-10-01T05:12:00Z, age 61.2 d, PAST the 21 d dedupe horizon (see ${PAST_HORIZON_RUNBOOK})`,
    );
    expect(line(envelope('e', '2026-11-28T10:00:00Z'))).toBe(
      'occurredAt 2026-11-28T10:00:00Z, age 3.0 d of 21 d horizon',
    );
    expect(line('{"poison":true}')).toMatch(/^occurredAt unknown, age unknown \(no readable occurredAt/);
    expect(describeHorizon(judgeHorizon(envelope('e', '2026-11-28T10:00:00Z'), undefined, NOW))).toBe(
      'occurredAt 2026-11-28T10:00:00Z, age 3.0 d (the stack outputs no dedupe horizon for it)',
    );
  });

  test('show --json carries occurredAt, ageSeconds, dedupeHorizonSeconds and horizon per consumer message; the text prints the line', () => {
    const messages = [
      deadLetter('m-old', envelope('e-old', '2026-10-01T05:12:00Z')),
      deadLetter('m-new', envelope('e-new', '2026-11-28T10:00:00Z'), { failureCause: 'UnsupportedEventType' }),
      deadLetter('m-poison', '{"poison":true}', { failureCause: 'SchemaViolation' }),
    ];
    const report: ShowReport = {
      command: 'show',
      queue: 'probe-fifo',
      kind: 'consumer',
      messages: messages.map((m) => shown(m, { dedupeHorizonSeconds: HORIZON, now: NOW })),
    };

    expect(
      JSON.parse(JSON.stringify(report.messages)).map((m: ShowReport['messages'][number]) => [
        m.eventId,
        m.occurredAt,
        m.ageSeconds,
        m.dedupeHorizonSeconds,
        m.horizon,
      ]),
    ).toEqual([
      ['e-old', '2026-10-01T05:12:00Z', 5_287_680, HORIZON, 'past'],
      ['e-new', '2026-11-28T10:00:00Z', 259_200, HORIZON, 'within'],
      [undefined, undefined, undefined, HORIZON, 'unknown'],
    ]);
    const text = formatReport(report).split('\n');
    expect(text).toContain(
      `  occurredAt 2026-10-01T05:12:00Z, age 61.2 d, PAST the 21 d dedupe horizon (see ${PAST_HORIZON_RUNBOOK})`,
    );
    expect(text).toContain('  occurredAt 2026-11-28T10:00:00Z, age 3.0 d of 21 d horizon');
    expect(text.filter((l) => l.startsWith('  occurredAt unknown, age unknown'))).toHaveLength(1);
    // Other DLQs hold no events: no horizon line.
    expect(shown(messages[0])).not.toHaveProperty('horizon');
  });

  test('list shows per consumer DLQ how many of the messages read are past its horizon', () => {
    const report: ListReport = {
      command: 'list',
      stack: 'S',
      target: 'local',
      queues: [
        { ...queueRow('probe-fifo', 'consumer'), dedupeHorizonSeconds: HORIZON, pastHorizon: 2 },
        { ...queueRow('old-consumer', 'consumer') },
        { ...queueRow('sweeper', 'async-invoke') },
      ],
    };

    const [header, ...rows] = formatReport(report).split('\n').slice(1);
    const column = header.indexOf('PAST HORIZON');
    expect(column).toBeGreaterThan(0);
    expect(rows.map((r) => r.slice(column).split(/\s{2,}/)[0])).toEqual(['2 (21 d)', '?', '-']);
  });

  test('copies of one event count once: list says how many events the messages read are, show numbers each copy', () => {
    const copies = [
      deadLetter('m-1', envelope('e-1', daysBefore(1)), { failureCause: 'RetryBudgetExhausted' }),
      deadLetter('m-2', envelope('e-1', daysBefore(1)), { failureCause: 'RetryBudgetExhausted' }),
      deadLetter('m-3', envelope('e-2', daysBefore(1)), { failureCause: 'RetryBudgetExhausted' }),
      deadLetter('m-4', 'not json', { failureCause: 'SchemaViolation' }),
    ];
    const list: ListReport = {
      command: 'list',
      stack: 'S',
      target: 'local',
      queues: [
        { ...queueRow('probe', 'consumer'), messages: 4, sampled: 4, events: new Set(copies.map(eventKeyOf)).size },
      ],
    };
    const show: ShowReport = {
      command: 'show',
      queue: 'probe',
      kind: 'consumer',
      messages: [
        { ...shown(copies[0]), copy: { of: 2, index: 1 } },
        { ...shown(copies[1]), copy: { of: 2, index: 2 } },
        { ...shown(copies[2]), copy: { of: 1, index: 1 } },
      ],
    };

    const listed = formatReport(list);
    const showed = formatReport(show).split('\n');

    expect(listed).toContain('4 (3 events in 4 read)');
    expect(showed[0]).toBe('probe: 3 message(s) shown, 2 event(s): copies of one event are marked, none consumed');
    expect(showed.filter((l) => l.startsWith('  copy '))).toEqual([
      '  copy 1 of 2 of this event here',
      '  copy 2 of 2 of this event here',
    ]);
  });

  describe('which messages redrive moves', () => {
    const old = deadLetter('m-old', envelope('e-old', daysBefore(60)));
    const recent = deadLetter('m-new', envelope('e-new', daysBefore(3)), { failureCause: 'UnsupportedEventType' });
    const decide = (message: DeadLetter, options: Omit<Parameters<typeof redriveDecision>[1], 'isEvent'> = {}) =>
      redriveDecision(message, { isEvent, ...options }, HORIZON, NOW);

    test('past the horizon: left, with the reason and what to do, unless --past-horizon names its eventId', () => {
      expect(decide(old)).toEqual({ skip: pastHorizonReason(HORIZON) });
      expect(pastHorizonReason(HORIZON)).toMatch(
        /^past the 21 d dedupe horizon: the consumer would refuse it \(DedupeHorizonPassed\)\. Check by hand .*--past-horizon <eventId>$/,
      );
      expect(decide(old, { pastHorizon: ['e-other'] })).toEqual({ skip: pastHorizonReason(HORIZON) });
      expect(decide(old, { pastHorizon: ['e-other', 'e-old'] })).toEqual({ move: 'rewrite' });
    });

    test('within the horizon: moved as it is, named or not', () => {
      expect(decide(recent)).toEqual({ move: 'as-is' });
      expect(decide(recent, { pastHorizon: ['e-new'] })).toEqual({ move: 'as-is' });
    });

    test('the other filters come first: a named event of another cause, or poison, stays for their reason', () => {
      expect(decide(old, { pastHorizon: ['e-old'], cause: 'UnsupportedEventType' })).toEqual({
        skip: 'cause DedupeHorizonPassed',
      });
      const poison = deadLetter('m-p', envelope('e-p', daysBefore(60)), { failureCause: 'SchemaViolation' });
      expect(decide(poison, { pastHorizon: ['e-p'] })).toEqual({ skip: expect.stringMatching(/^poison/) });
    });

    test("a message dead-lettered under the cause's old name (UnknownEntity) is shown and selected by the name now, either name given", () => {
      const before = deadLetter('m-b', envelope('e-b', daysBefore(3)), { failureCause: 'UnknownEntity' });

      expect(causeOf(before)).toBe('UnsupportedEventType');
      expect(decide(before, { cause: 'UnsupportedEventType' })).toEqual({ move: 'as-is' });
      expect(decide(before, { cause: 'UnknownEntity' })).toEqual({ move: 'as-is' });
      expect(decide(recent, { cause: 'UnknownEntity' })).toEqual({ move: 'as-is' });
      expect(decide(before, { cause: 'SchemaViolation' })).toEqual({ skip: 'cause UnsupportedEventType' });
    });

    test('owed past the provider key window: left with what to check, unless a finding names it', () => {
      const owed = deadLetter('m-k', envelope('e-k', daysBefore(2)), { failureCause: 'ProviderKeyWindowPassed' });

      expect(decide(owed)).toEqual({ skip: PROVIDER_KEY_WINDOW_REASON });
      expect(PROVIDER_KEY_WINDOW_REASON).toMatch(
        /--provider-performed <eventId> or --provider-not-performed <eventId>$/,
      );
      expect(decide(owed, { providerFindings: { 'e-other': 'performed' } })).toEqual({
        skip: PROVIDER_KEY_WINDOW_REASON,
      });
      expect(decide(owed, { providerFindings: { 'e-k': 'not-performed' } })).toEqual({
        move: 'as-is',
        providerFinding: 'not-performed',
      });
      // A finding is about a ProviderKeyWindowPassed message only: another cause moves as it is.
      expect(decide(recent, { providerFindings: { 'e-new': 'performed' } })).toEqual({ move: 'as-is' });
    });

    test('another event under a used eventId (EventIdReused) is left with what to compare: it would be refused again', () => {
      const reused = deadLetter('m-r', envelope('e-r', daysBefore(1)), { failureCause: 'EventIdReused' });

      const decision = decide(reused);

      expect(decision).toEqual({
        skip: expect.stringMatching(/^another event under a used eventId \(EventIdReused\)/),
      });
      expect(decide(reused, { cause: 'EventIdReused' })).toEqual(decision);
      expect(decision).not.toMatchObject({ skip: expect.stringMatching(/apply the missing effect by hand/) });
    });

    test('EventIdReused judged across fingerprint versions (a deploy or a rollback) is moved: the running code takes it as the same event', () => {
      const attributes = { failureCause: 'EventIdReused' as const };
      const acrossVersions = deadLetter('m-v', envelope('e-v', daysBefore(1)), {
        ...attributes,
        storedFingerprint: 'v2:0123456789abcdef0123456789abcdef',
        deliveredFingerprint: '0123456789abcdef0123456789abcdef',
      });
      const bothCurrent = deadLetter('m-c', envelope('e-c', daysBefore(1)), {
        ...attributes,
        storedFingerprint: 'v2:0123456789abcdef0123456789abcdef',
        deliveredFingerprint: 'v2:fedcba9876543210fedcba9876543210',
      });

      expect(decide(acrossVersions)).toEqual({ move: 'as-is' });
      expect(decide(bothCurrent)).toEqual({ skip: expect.stringMatching(/^another event under a used eventId/) });
      expect(decide(bothCurrent, { cause: 'EventIdReused' })).toEqual({ skip: expect.any(String) });
    });

    test("EventIdReused judged by the code that fingerprinted the consumer's parse (no version on either) moves only when the cause is named, after a person compared the bodies", () => {
      const judgedByParse = deadLetter('m-p', envelope('e-p', daysBefore(1)), {
        failureCause: 'EventIdReused',
        storedFingerprint: '0123456789abcdef0123456789abcdef',
        deliveredFingerprint: 'fedcba9876543210fedcba9876543210',
      });

      expect(decide(judgedByParse)).toEqual({
        skip: expect.stringMatching(/compare the body with the event its producer wrote/),
      });
      expect(decide(judgedByParse, { cause: 'EventIdReused' })).toEqual({ move: 'as-is' });
    });

    test('refused as stamped in the future (OccurredInFuture): left while the stamp is still beyond the margin, moved once within it', () => {
      const aDayAhead = new Date(NOW.getTime() + 86_400_000).toISOString();
      const ahead = deadLetter('m-f', envelope('e-f', aDayAhead), { failureCause: 'OccurredInFuture' });
      const nowWithin = deadLetter('m-w', envelope('e-w', new Date(NOW.getTime() + 60_000).toISOString()), {
        failureCause: 'OccurredInFuture',
      });

      expect(decide(ahead)).toEqual({ skip: stillInFutureReason(aDayAhead) });
      expect(stillInFutureReason(aDayAhead)).toMatch(/^stamped .*, still more than 300 s ahead \(OccurredInFuture\)/);
      expect(decide(nowWithin)).toEqual({ move: 'as-is' });
    });

    test('no readable occurredAt is poison, not a horizon question: moved only with --include-poison', () => {
      const unreadable = deadLetter('m-u', envelope('e-u', 'last tuesday'), { failureCause: undefined as never });
      delete (unreadable.attributes as Record<string, unknown>).failureCause;

      expect(decide(unreadable)).toEqual({ skip: expect.stringMatching(/^poison/) });
      expect(decide(unreadable, { includePoison: true })).toEqual({ move: 'as-is' });
    });

    test('without a horizon (a stack deployed before it) nothing is judged past it', () => {
      expect(redriveDecision(old, { isEvent }, undefined, NOW)).toEqual({ move: 'as-is' });
    });

    test('the rewrite sets occurredAt to now and keeps everything else of the body', () => {
      const { body, originalOccurredAt } = withFreshOccurredAt(old.body, NOW);

      expect(originalOccurredAt).toBe(daysBefore(60));
      expect(JSON.parse(body)).toEqual({ ...JSON.parse(old.body), occurredAt: NOW.toISOString() });
      expect(Object.keys(JSON.parse(body))).toEqual(Object.keys(JSON.parse(old.body)));
      expect(() => withFreshOccurredAt('{"poison":true}', NOW)).toThrow(/no readable occurredAt/);
    });
  });

  describe('redrive of a consumer DLQ with a horizon (SDK mocked)', () => {
    const sqsMock = mockClient(SQSClient);
    const sqs = new SQSClient({ region: 'us-east-1' });
    const outputs = { ...OUTPUTS, ProbeFifoDedupeHorizonSeconds: String(HORIZON) };
    const fifoQueue = fifoDlqOf(outputs);
    const sqsMessage = (id: string, occurredAt: string, cause = 'DedupeHorizonPassed') => ({
      MessageId: id,
      ReceiptHandle: `rh-${id}`,
      Body: envelope(`e-${id}`, occurredAt),
      Attributes: { MessageGroupId: 'thing-1', SentTimestamp: '0' },
      MessageAttributes: { failureCause: { DataType: 'String', StringValue: cause } },
    });
    beforeEach(() => {
      sqsMock.reset();
      sqsMock
        .on(GetQueueAttributesCommand)
        .resolves({ Attributes: { QueueArn: 'arn', ApproximateNumberOfMessages: '2' } });
      sqsMock.on(StartMessageMoveTaskCommand).resolves({ TaskHandle: 'task-1' });
      sqsMock.on(ChangeMessageVisibilityBatchCommand).resolves({});
      sqsMock.on(SendMessageCommand).resolves({});
      sqsMock.on(DeleteMessageCommand).resolves({});
      sqsMock
        .on(ReceiveMessageCommand)
        .resolvesOnce({
          Messages: [sqsMessage('old', daysBefore(60)), sqsMessage('new', daysBefore(3), 'UnsupportedEventType')],
        })
        .resolves({ Messages: [] });
    });

    test('the horizon comes from the stack output <Consumer>DedupeHorizonSeconds; a malformed one is an error', () => {
      expect(fifoQueue.dedupeHorizonSeconds).toBe(HORIZON);
      expect(discoverDeadLetterQueues(OUTPUTS, PROBE_CONSUMERS)[0]).not.toHaveProperty('dedupeHorizonSeconds');
      expect(() =>
        discoverDeadLetterQueues({ ...OUTPUTS, ProbeFifoDedupeHorizonSeconds: '21d' }, PROBE_CONSUMERS),
      ).toThrow(/ProbeFifoDedupeHorizonSeconds is not a whole number of seconds/);
    });

    test('the event past the horizon stays in the DLQ (not sent, not deleted, visible again) and the result says so', async () => {
      const result = await redrive(sqs, fifoQueue, { isEvent, max: 10, waitSeconds: 0, now: () => NOW });

      expect(result.moved.map((m) => m.eventId)).toEqual(['e-new']);
      expect(result.skipped).toEqual([{ messageId: 'old', reason: pastHorizonReason(HORIZON) }]);
      expect(result.horizon).toEqual({ dedupeHorizonSeconds: HORIZON, leftPastHorizon: 1, rewritten: 0, notSeen: [] });
      expect(
        sqsMock.commandCalls(SendMessageCommand).map((c) => JSON.parse(c.args[0].input.MessageBody!).eventId),
      ).toEqual(['e-new']);
      expect(sqsMock.commandCalls(DeleteMessageCommand).map((c) => c.args[0].input.ReceiptHandle)).toEqual(['rh-new']);
      expect(sqsMock.commandCalls(ChangeMessageVisibilityBatchCommand)[0].args[0].input.Entries).toEqual([
        { Id: '0', ReceiptHandle: 'rh-old', VisibilityTimeout: 0 },
      ]);
    });

    test('named by --past-horizon: resent with occurredAt now, the original in originalOccurredAt, its group kept', async () => {
      const result = await redrive(sqs, fifoQueue, {
        isEvent,
        max: 10,
        waitSeconds: 0,
        now: () => NOW,
        pastHorizon: ['e-old', 'e-gone'],
      });

      const [sent] = sqsMock.commandCalls(SendMessageCommand).map((c) => c.args[0].input);
      expect(JSON.parse(sent.MessageBody!)).toEqual({
        ...JSON.parse(envelope('e-old', '')),
        occurredAt: NOW.toISOString(),
      });
      expect(sent.MessageAttributes).toEqual({
        redrivenFrom: { DataType: 'String', StringValue: 'probe-fifo' },
        [ORIGINAL_OCCURRED_AT]: { DataType: 'String', StringValue: daysBefore(60) },
      });
      expect(sent.MessageGroupId).toBe('thing-1');
      expect(result.moved[0]).toEqual({
        messageId: 'old',
        eventId: 'e-old',
        groupId: 'thing-1',
        cause: 'DedupeHorizonPassed',
        occurredAt: NOW.toISOString(),
        originalOccurredAt: daysBefore(60),
      });
      expect(result.horizon).toEqual({
        dedupeHorizonSeconds: HORIZON,
        leftPastHorizon: 0,
        rewritten: 1,
        notSeen: ['e-gone'],
      });
      expect(sqsMock.commandCalls(DeleteMessageCommand)).toHaveLength(2);
    });

    test('on AWS, --all --include-poison (with or without --past-horizon) moves message by message: a move task would move the past-horizon body as it is', async () => {
      for (const pastHorizon of [[], ['e-old']]) {
        sqsMock
          .on(ReceiveMessageCommand)
          .resolvesOnce({ Messages: [sqsMessage('old', daysBefore(60))] })
          .resolves({ Messages: [] });
        const result = await redrive(sqs, fifoQueue, {
          isEvent,
          max: 10,
          all: true,
          includePoison: true,
          onAws: true,
          waitSeconds: 1,
          now: () => NOW,
          pastHorizon,
        });

        expect(result.method).toBe('receive-send-delete');
        expect(result.horizon).toMatchObject({ leftPastHorizon: pastHorizon.length === 0 ? 1 : 0 });
      }
      expect(sqsMock.commandCalls(StartMessageMoveTaskCommand)).toHaveLength(0);
    });

    test('--dry-run says what would be moved, rewritten and left, and moves nothing', async () => {
      sqsMock
        .on(ReceiveMessageCommand)
        .resolvesOnce({
          Messages: [
            sqsMessage('old', daysBefore(60)),
            sqsMessage('older', daysBefore(90)),
            sqsMessage('new', daysBefore(3), 'UnsupportedEventType'),
          ],
        })
        .resolves({ Messages: [] });

      const result = await redrive(sqs, fifoQueue, {
        isEvent,
        max: 10,
        waitSeconds: 0,
        now: () => NOW,
        dryRun: true,
        pastHorizon: ['e-old'],
      });
      const text = formatReport({ command: 'redrive', queue: 'probe-fifo', dryRun: true, result } as RedriveReport);

      expect(sqsMock.commandCalls(SendMessageCommand)).toHaveLength(0);
      expect(sqsMock.commandCalls(DeleteMessageCommand)).toHaveLength(0);
      expect(text.split('\n')).toEqual([
        'probe-fifo: 2 message(s) would be moved, 1 skipped, 0 failed',
        `  would rewrite and move old eventId e-old group thing-1 (DedupeHorizonPassed), occurredAt ${daysBefore(60)} -> ${NOW.toISOString()} (the original kept in originalOccurredAt)`,
        '  would move new eventId e-new group thing-1 (UnsupportedEventType)',
        `  skipped 1: ${pastHorizonReason(HORIZON)}`,
        '  dedupe horizon 21 d: 1 message(s) past it would be left in the DLQ, 1 would be resent with a fresh occurredAt',
      ]);
    });

    test('--past-horizon on a DLQ that holds no events, or on a consumer without a horizon, is a usage error', async () => {
      const out: string[] = [];
      const err: string[] = [];
      const open = async (stackOutputs: Record<string, string>) =>
        ({
          stack: { kind: 'local', name: 'S', outputs: stackOutputs, endpoints: {} },
          domain: DOMAIN,
          sqs,
          close: () => undefined,
        }) as unknown as DlqContext;
      const io = (stackOutputs: Record<string, string>) => ({
        domain: DOMAIN,
        out: (t: string) => out.push(t),
        err: (t: string) => err.push(t),
        open: () => open(stackOutputs),
      });

      expect(await main(['redrive', 'sweeper', '--past-horizon', 'e-1'], io(outputs))).toBe(2);
      expect(await main(['redrive', 'probe-fifo', '--past-horizon', 'e-1'], io(OUTPUTS))).toBe(2);
      expect(err.join('\n')).toMatch(/--past-horizon is for a consumer's DLQ: sweeper/);
      expect(err.join('\n')).toMatch(/--past-horizon: the stack outputs no dedupe horizon for probe-fifo/);
      expect(sqsMock.commandCalls(ReceiveMessageCommand)).toHaveLength(0);
    });
  });
});

function queueRow(name: string, kind: ListReport['queues'][number]['kind']): ListReport['queues'][number] {
  return {
    name,
    url: `https://sqs/1/${name}`,
    kind,
    fifo: false,
    redrivesTo: '-',
    messages: 2,
    inFlight: 0,
    byCause: {},
    sampled: 2,
    events: 2,
  };
}
