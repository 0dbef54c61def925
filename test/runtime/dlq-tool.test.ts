// First, before any tool loads: the tools take their domain from the probe tooling, not the example's.
import { DynamoDBClient, QueryCommand } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DynamoDbOutboxStore } from '@exactly-once/runtime/aws/dynamodb-outbox-store';
import { entityEffectKey, inboxKey } from '@exactly-once/runtime/aws/inbox-table';
import { consumerOutputNames } from '@exactly-once/runtime/consumer-spec';
import { signedFetch } from '@exactly-once/tools/local-runtime/api/sign';
import type { LocalRuntime } from '@exactly-once/tools/local-runtime/runtime';
import { main } from '@exactly-once/tools/dlq/cli';
import type { ListReport, RedriveReport, ShowReport } from '@exactly-once/tools/dlq/commands';
import { PAST_HORIZON_RUNBOOK } from '@exactly-once/tools/dlq/horizon';
import { openContext } from '@exactly-once/tools/dlq/context';
import { consumerQueueUrls, LOCAL_CREDENTIALS } from '@exactly-once/tools/stack';
import { PROBE_APP_CONSUMERS } from '../exactly-once/fixtures/probe-stack-consumers';
import { THING_PK_PREFIX } from '../exactly-once/fixtures/probe-stack-things';
import { eventually, startProbeStack } from './fixtures';
import { tooling as probeTooling } from '../support/probe-tooling';

/**
 * `npm run dlq` against the probe stack (the mechanism with its neutral fixture) on the local runtime:
 * the CLI's main() with the runtime's outputs file, the emulators' real queues and tables, and the
 * probe tooling handed to the tool as its domain. The DLQs it fills are those of `probe` (standard, ThingHappened)
 * and `probe-fifo` (FIFO, both event types), each counting an event once per entity (appliedCount on
 * `EFFECT#<consumer>#<thingId>`) under its inbox claim; the app's other consumers are only listed.
 */
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'dlq-tool-'));
const outputsFile = path.join(work, 'outputs.json');
let runtime: LocalRuntime;
let outputs: Record<string, string>;
let sqs: SQSClient;
let dynamodb: DynamoDBClient;
let documents: DynamoDBDocumentClient;

const probeDlq = () => outputs[consumerOutputNames('probe').deadLetterQueueUrl];
const probeQueue = () => outputs[consumerOutputNames('probe').queueUrl];
const fifoDlq = () => outputs[consumerOutputNames('probe-fifo').deadLetterQueueUrl];
const fifoQueue = () => outputs[consumerOutputNames('probe-fifo').queueUrl];

beforeAll(async () => {
  runtime = await startProbeStack({ work, outputsFile });
  outputs = runtime.outputs.stackOutputs;
  const { region, endpoints } = runtime.outputs;
  sqs = new SQSClient({ region, endpoint: endpoints.sqs, credentials: LOCAL_CREDENTIALS });
  dynamodb = new DynamoDBClient({ region, endpoint: endpoints.dynamodb, credentials: LOCAL_CREDENTIALS });
  documents = DynamoDBDocumentClient.from(dynamodb);
}, 240_000);

afterAll(async () => {
  sqs?.destroy();
  dynamodb?.destroy();
  await runtime?.stop();
});

async function dlq<T>(...argv: string[]): Promise<{ code: number; report: T; stderr: string }> {
  const { code, stdout, stderr } = await dlqText(...argv, '--json');
  return { code, report: (stdout !== '' ? JSON.parse(stdout) : undefined) as T, stderr };
}

/** The CLI as an operator reads it (no --json). */
async function dlqText(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, {
    domain: probeTooling,
    out: (t) => out.push(t),
    err: (t) => err.push(t),
    open: (_command, domain) => openContext({ outputsFile: process.env.DLQ_TEST_OUTPUTS ?? outputsFile }, domain),
  });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

/** POST /things: a thing and its ThingHappened outbox item, written in one transaction. */
async function createThing(suffix: string): Promise<string> {
  const response = await signedFetch(`${runtime.outputs.apiUrl}/things`, {
    method: 'POST',
    body: JSON.stringify({ ownerId: `dlq-owner-${suffix}`, amount: 2 }),
    headers: { 'Idempotency-Key': `"dlq-${suffix}"` },
    accessKeyId: 'AKIADLQTEST',
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { thingId: string }).thingId;
}

/** A consumer's effect on one thing: how many times it applied an event of it, and the last one. */
async function effect(consumer: string, thingId: string): Promise<Record<string, unknown> | undefined> {
  const { Item } = await documents.send(
    new GetCommand({
      TableName: outputs.EffectsTableName,
      Key: entityEffectKey(consumer, thingId),
      ConsistentRead: true,
    }),
  );
  return Item;
}

async function outboxItems(thingId: string): Promise<Record<string, unknown>[]> {
  const { Items = [] } = await dynamodb.send(
    new QueryCommand({
      TableName: outputs.ThingsTableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :outbox)',
      ExpressionAttributeValues: { ':pk': { S: `${THING_PK_PREFIX}${thingId}` }, ':outbox': { S: 'OUTBOX#' } },
      ConsistentRead: true,
    }),
  );
  return Items.map((item) => unmarshall(item));
}

async function depth(url: string): Promise<number> {
  const { Attributes = {} } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return Number(Attributes.ApproximateNumberOfMessages) + Number(Attributes.ApproximateNumberOfMessagesNotVisible);
}

const poisonCopy = (n: string) => ({
  MessageBody: JSON.stringify({ poison: true, n }),
  MessageAttributes: {
    failureCause: { DataType: 'String', StringValue: 'SchemaViolation' },
    consumer: { DataType: 'String', StringValue: 'probe-fifo' },
    attempt: { DataType: 'String', StringValue: '1' },
  },
});

describe('on the local runtime', () => {
  let thingId: string;
  let eventBody: string;

  beforeAll(async () => {
    thingId = await createThing(Date.now().toString(36));
    // Both effects applied before the test copies their event into the DLQs.
    for (const consumer of ['probe', 'probe-fifo'])
      await eventually(() => effect(consumer, thingId), 60_000, `the ${consumer} effect`);
    const [item] = await outboxItems(thingId);
    eventBody = JSON.stringify(item.event);
    // An event both consumers already applied, back in their DLQs (as if every ack had been lost), and poison.
    await sqs.send(new SendMessageCommand({ QueueUrl: probeDlq(), MessageBody: eventBody }));
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: fifoDlq(),
        MessageBody: eventBody,
        MessageGroupId: thingId,
        MessageDeduplicationId: `seed-${thingId}`,
      }),
    );
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: fifoDlq(),
        ...poisonCopy('1'),
        MessageGroupId: 'poison-1',
        MessageDeduplicationId: 'poison-1',
      }),
    );
  }, 60_000);

  test('list finds every DLQ of the stack from its outputs, with counts by failureCause and where each redrives to', async () => {
    const { code, report } = await dlq<ListReport>('list');

    expect(code).toBe(0);
    const byName = Object.fromEntries(report.queues.map((q) => [q.name, q]));
    // Every consumer of the list, whatever it holds, and the stack's other DLQs.
    expect(Object.keys(byName).sort()).toEqual(
      [...PROBE_APP_CONSUMERS.map((c) => c.name), 'relay-failures', 'sweeper'].sort(),
    );
    for (const { consumer, queueUrl } of consumerQueueUrls(outputs, PROBE_APP_CONSUMERS))
      expect(byName[consumer.name]).toMatchObject({
        kind: 'consumer',
        fifo: consumer.fifo,
        redrivesTo: queueUrl.split('/').pop(),
      });
    expect(byName['probe-fifo']).toMatchObject({
      messages: 2,
      byCause: { RetriesExhausted: 1, SchemaViolation: 1 },
      fifo: true,
    });
    expect(byName['probe-fifo'].redrivesTo).toBe(fifoQueue().split('/').pop());
    expect(byName.probe).toMatchObject({ messages: 1, byCause: { RetriesExhausted: 1 } });
    expect(byName['probe-fifo'].oldestAgeSeconds).toBeGreaterThanOrEqual(0);
    expect(byName['relay-failures'].kind).toBe('stream-pointers');
    expect(byName.sweeper.kind).toBe('async-invoke');
  });

  test('show returns the messages with their attributes and consumes nothing: they are still there and receivable', async () => {
    const { code, report } = await dlq<ShowReport>('show', 'probe-fifo', '--max', '5');

    expect(code).toBe(0);
    expect(report.messages).toHaveLength(2);
    const poison = report.messages.find((m) => m.cause === 'SchemaViolation')!;
    expect(poison).toMatchObject({ consumer: 'probe-fifo', attempt: '1', groupId: 'poison-1' });
    expect(report.messages.find((m) => m.cause === 'RetriesExhausted')!.eventId).toBe(JSON.parse(eventBody).eventId);
    expect(await depth(fifoDlq())).toBe(2);
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: fifoDlq(), MaxNumberOfMessages: 10, VisibilityTimeout: 0 }),
    );
    expect(Messages.length).toBeGreaterThan(0);
  });

  test('redrive moves already-applied events back, leaves poison, and the consumers apply nothing twice', async () => {
    const before = { probe: await effect('probe', thingId), fifo: await effect('probe-fifo', thingId) };

    const fifo = await dlq<RedriveReport>('redrive', 'probe-fifo');
    const standard = await dlq<RedriveReport>('redrive', 'probe');

    expect(fifo.code).toBe(0);
    expect(fifo.report.result!.moved.map((m) => m.eventId)).toEqual([JSON.parse(eventBody).eventId]);
    expect(fifo.report.result!.skipped).toEqual([
      expect.objectContaining({ reason: expect.stringMatching(/^poison/) }),
    ]);
    expect(standard.report.result!.moved).toHaveLength(1);
    expect(await depth(fifoDlq())).toBe(1); // the poison stays
    const sourceQueues = consumerQueueUrls(outputs, PROBE_APP_CONSUMERS).map((q) => q.queueUrl);
    await eventually(
      async () => ((await Promise.all(sourceQueues.map(depth))).every((n) => n === 0) ? true : undefined),
      20_000,
      'the redriven events to be consumed',
    );
    // Each consumer applied the event once, before the redrive, and not again.
    expect(before.probe).toMatchObject({ appliedCount: 1 });
    expect(before.fifo).toMatchObject({ appliedCount: 1 });
    expect(await effect('probe', thingId)).toEqual(before.probe);
    expect(await effect('probe-fifo', thingId)).toEqual(before.fifo);
    expect(await depth(probeDlq())).toBe(0);
  }, 60_000);

  test('redrive refuses poison by cause without --include-poison (usage error, nothing moved)', async () => {
    const { code, stderr } = await dlq('redrive', 'probe-fifo', '--cause', 'SchemaViolation');

    expect(code).toBe(2);
    expect(stderr).toMatch(/--include-poison/);
    expect(await depth(fifoDlq())).toBe(1);
  });

  test('a FIFO redrive keeps each message group and its order', async () => {
    // A DLQ/source pair no poller reads, published the way the stack's outputs are, so the order stays observable.
    const create = async (name: string) =>
      (await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: { FifoQueue: 'true' } }))).QueueUrl!;
    const [dlqUrl, sourceUrl] = [await create('order-test-dlq.fifo'), await create('order-test-queue.fifo')];
    const extended = path.join(work, 'outputs-order-test.json');
    const file = JSON.parse(fs.readFileSync(outputsFile, 'utf8'));
    file.stackOutputs = { ...file.stackOutputs, OrderTestDlqUrl: dlqUrl, OrderTestQueueUrl: sourceUrl };
    fs.writeFileSync(extended, JSON.stringify(file));
    const sent = ['a1', 'b1', 'a2', 'a3', 'b2'];
    for (const id of sent) {
      const body = JSON.stringify({ ...JSON.parse(eventBody), eventId: id });
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: dlqUrl,
          MessageBody: body,
          MessageGroupId: `group-${id[0]}`,
          MessageDeduplicationId: id,
        }),
      );
    }

    process.env.DLQ_TEST_OUTPUTS = extended;
    const { code, report } = await dlq<RedriveReport>('redrive', 'order-test').finally(
      () => delete process.env.DLQ_TEST_OUTPUTS,
    );

    expect(code).toBe(0);
    expect(report.result!.moved).toHaveLength(5);
    const received: { group: string; id: string }[] = [];
    for (let round = 0; round < 10 && received.length < 5; round++) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: sourceUrl,
          MaxNumberOfMessages: 10,
          MessageSystemAttributeNames: ['All'],
        }),
      );
      for (const m of Messages)
        received.push({ group: m.Attributes!.MessageGroupId!, id: JSON.parse(m.Body!).eventId });
      // A group hands out its next message only once the one before is deleted.
      for (const m of Messages)
        await sqs.send(new DeleteMessageCommand({ QueueUrl: sourceUrl, ReceiptHandle: m.ReceiptHandle! }));
    }
    const inGroup = (g: string) => received.filter((r) => r.group === g).map((r) => r.id);
    expect(inGroup('group-a')).toEqual(['a1', 'a2', 'a3']);
    expect(inGroup('group-b')).toEqual(['b1', 'b2']);
  });

  test('relay-failures: show explains a stream pointer (shard, range, pending outbox items) and redrive marks them for the sweeper', async () => {
    const relayedThing = await createThing(`relay-${Date.now().toString(36)}`);
    const [item] = await eventually(
      async () => {
        const items = await outboxItems(relayedThing);
        return items.length > 0 && items[0].dispatchedAt !== undefined ? items : undefined;
      },
      15_000,
      'the relay to dispatch the outbox item',
    );
    const eventId = (item.event as { eventId: string }).eventId;
    // As if the relay had given up on it: pending again, and Lambda's failure record pointing at its INSERT.
    await documents.send(
      new UpdateCommand({
        TableName: outputs.ThingsTableName,
        Key: { pk: item.pk, sk: item.sk },
        UpdateExpression: 'SET pendingShard = :s REMOVE dispatchedAt',
        ExpressionAttributeValues: { ':s': '0' },
      }),
    );
    const pointer = await streamPointerTo(String(item.sk));
    await sqs.send(
      new SendMessageCommand({ QueueUrl: outputs.RelayFailureQueueUrl, MessageBody: JSON.stringify(pointer) }),
    );

    const shown = await dlq<ShowReport>('show', 'relay-failures');
    const redriven = await dlq<RedriveReport>('redrive', 'relay-failures');

    expect(shown.code).toBe(0);
    expect(shown.report.pointers![0].pointer).toMatchObject({ shardId: pointer.DDBStreamBatchInfo.shardId });
    expect(shown.report.pointers![0].items).toEqual([
      expect.objectContaining({ entityId: relayedThing, eventId, state: 'pending' }),
    ]);
    expect(redriven.code).toBe(0);
    expect(redriven.report.pointers).toEqual([expect.objectContaining({ marked: [eventId] })]);
    expect(await depth(outputs.RelayFailureQueueUrl)).toBe(0);
    const sweeperView = new DynamoDbOutboxStore(documents, outputs.ThingsTableName, THING_PK_PREFIX);
    const due = await sweeperView.pendingOlderThan(new Date(Date.now() - 3600_000), 100);
    expect(due.map((p) => (p.event as { eventId?: string }).eventId)).toContain(eventId);
  }, 60_000);

  describe('the dedupe horizon', () => {
    const DAY_MS = 86_400_000;
    const HORIZON_SECONDS = 21 * 86_400;
    const sixtyDaysAgo = () => new Date(Date.now() - 60 * DAY_MS).toISOString();

    test("the local runtime writes every consumer's dedupe horizon to its outputs (21 days)", () => {
      const file = JSON.parse(fs.readFileSync(outputsFile, 'utf8'));
      for (const consumer of PROBE_APP_CONSUMERS)
        expect(file.stackOutputs[consumerOutputNames(consumer.name).dedupeHorizonSeconds]).toBe(
          String(HORIZON_SECONDS),
        );
      expect(outputs.ProbeFifoDedupeHorizonSeconds).toBe('1814400');
    });

    test('a 60-day-old event in the probe DLQ: shown past the horizon, left by redrive, resent by --past-horizon with a fresh occurredAt, applied once', async () => {
      // An event the probe consumer never applied (its own thing, its own eventId), dead-lettered as too old.
      const suffix = Date.now().toString(36);
      const event = {
        ...JSON.parse(eventBody),
        eventId: `horizon-${suffix}`,
        entityId: `horizon-thing-${suffix}`,
        occurredAt: sixtyDaysAgo(),
      };
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: probeDlq(),
          MessageBody: JSON.stringify(event),
          MessageAttributes: {
            failureCause: { DataType: 'String', StringValue: 'DedupeHorizonPassed' },
            consumer: { DataType: 'String', StringValue: 'probe' },
            attempt: { DataType: 'String', StringValue: '1' },
          },
        }),
      );

      const shown = await dlq<ShowReport>('show', 'probe');
      const shownText = await dlqText('show', 'probe');
      const listed = await dlq<ListReport>('list');

      expect(shown.code).toBe(0);
      expect(shown.report.messages).toEqual([
        expect.objectContaining({
          eventId: event.eventId,
          cause: 'DedupeHorizonPassed',
          occurredAt: event.occurredAt,
          ageSeconds: expect.any(Number),
          dedupeHorizonSeconds: HORIZON_SECONDS,
          horizon: 'past',
        }),
      ]);
      expect(shown.report.messages[0].ageSeconds! / 86_400).toBeCloseTo(60, 1);
      expect(shownText.stdout).toContain(
        `occurredAt ${event.occurredAt}, age 60.0 d, PAST the 21 d dedupe horizon (see ${PAST_HORIZON_RUNBOOK})`,
      );
      expect(listed.report.queues.find((q) => q.name === 'probe')).toMatchObject({
        messages: 1,
        pastHorizon: 1,
        dedupeHorizonSeconds: HORIZON_SECONDS,
      });

      // Without --past-horizon it stays, and the report says so.
      const left = await dlq<RedriveReport>('redrive', 'probe');
      const leftText = await dlqText('redrive', 'probe', '--dry-run');

      expect(left.code).toBe(0);
      expect(left.report.result!.moved).toEqual([]);
      expect(left.report.result!.skipped).toEqual([
        { messageId: expect.any(String), reason: expect.stringMatching(/^past the 21 d dedupe horizon/) },
      ]);
      expect(left.report.result!.horizon).toEqual({
        dedupeHorizonSeconds: HORIZON_SECONDS,
        leftPastHorizon: 1,
        rewritten: 0,
        notSeen: [],
      });
      expect(leftText.stdout).toContain('dedupe horizon 21 d: 1 message(s) past it would be left in the DLQ');
      expect(await depth(probeDlq())).toBe(1);

      // A dry run of --past-horizon says what it would rewrite and moves nothing.
      const dryRun = await dlq<RedriveReport>('redrive', 'probe', '--past-horizon', event.eventId, '--dry-run');

      expect(dryRun.report.result!.moved).toEqual([
        expect.objectContaining({ eventId: event.eventId, originalOccurredAt: event.occurredAt }),
      ]);
      expect(await depth(probeDlq())).toBe(1);

      // Checked by hand: not applied (no claim, no effect). Resent with a fresh occurredAt.
      expect(await effect('probe', event.entityId)).toBeUndefined();
      const before = Date.now();
      const resent = await dlq<RedriveReport>('redrive', 'probe', '--past-horizon', event.eventId);

      expect(resent.code).toBe(0);
      const [moved] = resent.report.result!.moved;
      expect(moved).toMatchObject({ eventId: event.eventId, originalOccurredAt: event.occurredAt });
      expect(Date.parse(moved.occurredAt!)).toBeGreaterThanOrEqual(before - 1000);
      expect(resent.report.result!.horizon).toMatchObject({ leftPastHorizon: 0, rewritten: 1 });
      // The consumer takes it (its horizon check passes the fresh occurredAt) and applies it once.
      const applied = await eventually(() => effect('probe', event.entityId), 20_000, 'the resent event to be applied');
      await eventually(async () => ((await depth(probeQueue())) === 0 ? true : undefined), 20_000);
      expect(await effect('probe', event.entityId)).toEqual(applied);
      expect(applied).toMatchObject({ appliedCount: 1, lastEventId: event.eventId });
      expect(await depth(probeDlq())).toBe(0); // not dead-lettered again
      const { Item: claim } = await documents.send(
        new GetCommand({
          TableName: outputs.EffectsTableName,
          Key: inboxKey('probe', event.eventId, event.tenant),
          ConsistentRead: true,
        }),
      );
      expect(claim).toBeDefined();
    }, 90_000);

    test('--past-horizon moves the named event with occurredAt now and originalOccurredAt, the rest of the body as it was', async () => {
      // A DLQ/source pair no poller reads, published the way the stack's outputs are, so the copy stays observable.
      const create = async (name: string) => (await sqs.send(new CreateQueueCommand({ QueueName: name }))).QueueUrl!;
      const [dlqUrl, sourceUrl] = [await create('horizon-test-dlq'), await create('horizon-test-queue')];
      const extended = path.join(work, 'outputs-horizon-test.json');
      const file = JSON.parse(fs.readFileSync(outputsFile, 'utf8'));
      file.stackOutputs = {
        ...file.stackOutputs,
        HorizonTestDlqUrl: dlqUrl,
        HorizonTestQueueUrl: sourceUrl,
        HorizonTestDedupeHorizonSeconds: outputs[consumerOutputNames('probe').dedupeHorizonSeconds],
      };
      fs.writeFileSync(extended, JSON.stringify(file));
      const old = { ...JSON.parse(eventBody), eventId: 'horizon-old', occurredAt: sixtyDaysAgo() };
      const recent = { ...JSON.parse(eventBody), eventId: 'horizon-recent', occurredAt: new Date().toISOString() };
      for (const body of [old, recent])
        await sqs.send(new SendMessageCommand({ QueueUrl: dlqUrl, MessageBody: JSON.stringify(body) }));
      const receiveAll = async () => {
        const { Messages = [] } = await sqs.send(
          new ReceiveMessageCommand({ QueueUrl: sourceUrl, MaxNumberOfMessages: 10, MessageAttributeNames: ['All'] }),
        );
        for (const m of Messages)
          await sqs.send(new DeleteMessageCommand({ QueueUrl: sourceUrl, ReceiptHandle: m.ReceiptHandle! }));
        return Messages;
      };

      process.env.DLQ_TEST_OUTPUTS = extended;
      try {
        const first = await dlq<RedriveReport>('redrive', 'horizon-test');
        const firstMoved = await receiveAll();

        expect(first.code).toBe(0);
        expect(first.report.result!.moved.map((m) => m.eventId)).toEqual(['horizon-recent']);
        expect(first.report.result!.horizon).toMatchObject({ leftPastHorizon: 1, rewritten: 0 });
        expect(firstMoved.map((m) => JSON.parse(m.Body!))).toEqual([recent]);
        expect(await depth(dlqUrl)).toBe(1);

        const before = Date.now();
        const second = await dlq<RedriveReport>('redrive', 'horizon-test', '--past-horizon', 'horizon-old');
        const [copy, ...more] = await receiveAll();

        expect(second.code).toBe(0);
        expect(more).toEqual([]);
        const body = JSON.parse(copy.Body!);
        expect(body).toEqual({ ...old, occurredAt: expect.any(String) });
        expect(Date.parse(body.occurredAt)).toBeGreaterThanOrEqual(before - 1000);
        expect(Date.parse(body.occurredAt)).toBeLessThanOrEqual(Date.now());
        expect(copy.MessageAttributes).toMatchObject({
          originalOccurredAt: { DataType: 'String', StringValue: old.occurredAt },
          redrivenFrom: { DataType: 'String', StringValue: 'horizon-test' },
        });
        expect(await depth(dlqUrl)).toBe(0);
      } finally {
        delete process.env.DLQ_TEST_OUTPUTS;
      }
    });
  });
});

/** Lambda's on-failure record for the stream record that inserted this outbox item. */
async function streamPointerTo(sk: string) {
  const streams = new DynamoDBStreamsClient({
    region: runtime.outputs.region,
    endpoint: runtime.outputs.endpoints.dynamodb,
    credentials: LOCAL_CREDENTIALS,
  });
  const thingsTable = Object.entries(runtime.outputs.tables).find(([, name]) => name === outputs.ThingsTableName)![0];
  const streamArn = runtime.outputs.tableStreamArns[thingsTable];
  const { StreamDescription } = await streams.send(new DescribeStreamCommand({ StreamArn: streamArn }));
  const shardId = StreamDescription!.Shards![0].ShardId!;
  let { ShardIterator: iterator } = await streams.send(
    new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: shardId, ShardIteratorType: 'TRIM_HORIZON' }),
  );
  for (let page = 0; page < 100 && iterator !== undefined; page++) {
    const { Records = [], NextShardIterator } = await streams.send(new GetRecordsCommand({ ShardIterator: iterator }));
    const insert = Records.find((r) => r.eventName === 'INSERT' && r.dynamodb?.NewImage?.sk?.S === sk);
    if (insert !== undefined) {
      streams.destroy();
      const sequence = insert.dynamodb!.SequenceNumber!;
      return {
        requestContext: { condition: 'RetryAttemptsExhausted' },
        version: '1.0',
        DDBStreamBatchInfo: {
          shardId,
          startSequenceNumber: sequence,
          endSequenceNumber: sequence,
          batchSize: 1,
          streamArn,
        },
      };
    }
    iterator = NextShardIterator;
  }
  streams.destroy();
  throw new Error(`No INSERT of ${sk} in the stream`);
}
