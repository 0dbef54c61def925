import type { SendMessageBatchCommandInput, SendMessageBatchRequestEntry } from '@aws-sdk/client-sqs';
import {
  BatchGetCommand,
  QueryCommand,
  type BatchGetCommandInput,
  type DynamoDBDocumentClient,
  type QueryCommandInput,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { DynamoDbOutboxStore } from '@exactly-once/runtime/aws/dynamodb-outbox-store';
import { pendingShardOf, PENDING_SHARDS } from '@exactly-once/runtime/aws/outbox-table';
import type { EventEnvelope } from '@exactly-once/runtime';
import { PROBE_CONSUMERS } from '../exactly-once/fixtures/probe-spec';
import type { ConsumerRoute } from '@exactly-once/runtime/outbox/routes';
import { lambdaContext } from '../support/api-events';
import { thingHappened as happened, thingUndone as undone } from '../exactly-once/fixtures/probe-events';
import { acceptEntries, loadWithMockedSdk, type MockedSdkHandler } from '../support/mocked-sdk';
import { MARKS_IN_FLIGHT, relayOutboxEvents, sweepOutbox } from '@exactly-once/runtime/outbox/relay';
import type { OutboxStore } from '@exactly-once/runtime/outbox/ports';

/**
 * The outbox relay (stream -> queues) and the sweeper (schedule -> queues),
 * with SQS and DynamoDB mocked at the SDK, each handler in its own module
 * registry (loadWithMockedSdk). The routes are the neutral fixture's consumers:
 * `probe-fifo` (FIFO, ThingHappened and ThingUndone) and `probe` (standard,
 * ThingHappened only); the outbox items live in `THING#<entityId>` partitions.
 */

type RelayHandler = (event: DynamoDBStreamEvent, context: Context) => Promise<DynamoDBBatchResponse>;
type SweeperHandler = (
  event: unknown,
  context: Context,
) => Promise<{
  republished: number;
  failed: number;
  malformed: { itemKey: string; createdAt: string; reason: string; setAside: boolean }[];
  oldestPendingAgeSeconds: number;
}>;

const OUTBOX_TABLE = 'things-table';
/** The partition the application writes an entity's outbox items in (OUTBOX_ENTITY_PARTITION_PREFIX). */
const ENTITY_PREFIX = 'THING#';
const queueUrlOf = (consumer: string, fifo: boolean) =>
  `https://sqs.us-east-1.amazonaws.com/123456789012/${consumer}${fifo ? '.fifo' : ''}`;
const FIFO_URL = queueUrlOf('probe-fifo', true);
const STANDARD_URL = queueUrlOf('probe', false);
const SWEEP_AGE_SECONDS = 300;
/**
 * The stack's routing: each consumer on the list at a queue of its own (probe-fifo at FIFO_URL, probe at
 * STANDARD_URL).
 */
const ROUTES: ConsumerRoute[] = PROBE_CONSUMERS.map(({ name, fifo, eventTypes }) => ({
  consumer: name,
  queueUrl: queueUrlOf(name, fifo),
  fifo,
  eventTypes: [...eventTypes],
}));

async function load<H>(module: 'outbox-relay' | 'outbox-sweeper'): Promise<MockedSdkHandler<H>> {
  delete process.env.FAULT_INJECTION_FILE;
  delete process.env.FAULT_PARAMETER_NAME;
  return loadWithMockedSdk<H>(
    {
      OUTBOX_TABLE_NAME: OUTBOX_TABLE,
      OUTBOX_ENTITY_PARTITION_PREFIX: ENTITY_PREFIX,
      OUTBOX_DISPATCHED_RETENTION_SECONDS: '604800',
      CONSUMER_ROUTES: JSON.stringify(ROUTES),
      OUTBOX_SWEEP_AGE_SECONDS: String(SWEEP_AGE_SECONDS),
    },
    () =>
      module === 'outbox-relay'
        ? import('@exactly-once/runtime/wiring/handlers/relay-handler')
        : import('@exactly-once/runtime/wiring/handlers/sweeper-handler').then(async (binding) => {
            const factory = await import('@exactly-once/runtime/wiring/entry-points/sweeper-handler');
            sweepLimits = { maxItems: factory.SWEEP_MAX_ITEMS, maxSetAside: factory.SWEEP_MAX_SET_ASIDE };
            return binding;
          }),
  );
}
/** The sweeper's SWEEP_MAX_ITEMS and SWEEP_MAX_SET_ASIDE, read from the module the handler was loaded from. */
let sweepLimits: { maxItems: number; maxSetAside: number };

let relay: MockedSdkHandler<RelayHandler>;
let sweeper: MockedSdkHandler<SweeperHandler>;

beforeAll(async () => {
  relay = await load<RelayHandler>('outbox-relay');
  sweeper = await load<SweeperHandler>('outbox-sweeper');
});

beforeEach(() => {
  for (const h of [relay, sweeper]) {
    h.doc.reset();
    h.ddb.reset();
    h.sqs.reset();
    h.sqs.on(h.sqsSdk.SendMessageBatchCommand).callsFake(acceptEntries());
    h.doc.on(h.docSdk.UpdateCommand).resolves({});
  }
});

afterEach(() => {
  jest.restoreAllMocks();
  for (const h of [relay, sweeper]) expect(h.ddb.calls()).toHaveLength(0);
});

// ---------------------------------------------------------------- fixtures

function outboxItem(event: EventEnvelope, createdAt = event.occurredAt): Record<string, unknown> {
  return {
    pk: `THING#${event.entityId}`,
    sk: `OUTBOX#${event.eventId}`,
    entity: 'OUTBOX',
    eventId: event.eventId,
    type: event.type,
    entityId: event.entityId,
    event,
    createdAt,
    pendingShard: pendingShardOf(event.eventId),
  };
}

let sequence = 1_000_000;
function streamRecord(
  eventName: 'INSERT' | 'MODIFY' | 'REMOVE',
  item: Record<string, unknown> | undefined,
): DynamoDBRecord {
  sequence += 1;
  return {
    eventID: `evt-${sequence}`,
    eventName,
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: 'us-east-1',
    dynamodb: {
      ApproximateCreationDateTime: 1_893_553_445,
      Keys: marshall({ pk: item?.pk ?? 'THING#x', sk: item?.sk ?? 'THING' }) as never,
      ...(item === undefined ? {} : { NewImage: marshall(item, { removeUndefinedValues: true }) as never }),
      SequenceNumber: String(sequence).padStart(21, '0'),
      SizeBytes: 256,
      StreamViewType: 'NEW_IMAGE',
    },
    eventSourceARN: 'arn:aws:dynamodb:us-east-1:123456789012:table/things-table/stream/2030-01-01T00:00:00.000',
  };
}

const insertOf = (event: EventEnvelope) => streamRecord('INSERT', outboxItem(event));
const seqOf = (record: DynamoDBRecord) => String(record.dynamodb?.SequenceNumber);
const failedSeqs = (response: DynamoDBBatchResponse) => response.batchItemFailures.map((f) => f.itemIdentifier);

function runRelay(...records: DynamoDBRecord[]): Promise<DynamoDBBatchResponse> {
  return relay.handler({ Records: records }, lambdaContext());
}

function batchSends<H>(h: MockedSdkHandler<H>, queueUrl: string): SendMessageBatchRequestEntry[][] {
  return h.sqs
    .commandCalls(h.sqsSdk.SendMessageBatchCommand)
    .map((c) => c.args[0].input)
    .filter((input) => input.QueueUrl === queueUrl)
    .map((input) => input.Entries ?? []);
}
const sentEventIds = <H>(h: MockedSdkHandler<H>, queueUrl: string) =>
  batchSends(h, queueUrl)
    .flat()
    .map((e) => e.MessageAttributes?.eventId?.StringValue);
/** The events marked dispatched (the dispatch update, not the sweeper setting an item aside). */
const markedEventIds = <H>(h: MockedSdkHandler<H>) =>
  h.doc
    .commandCalls(h.docSdk.UpdateCommand)
    .filter((c) => String(c.args[0].input.UpdateExpression).includes('REMOVE pendingShard'))
    .map((c) => String(c.args[0].input.Key?.sk).replace('OUTBOX#', ''));
/** The outbox items the sweeper set aside (moved out of their pending shard). */
const setAsideKeys = <H>(h: MockedSdkHandler<H>) =>
  h.doc
    .commandCalls(h.docSdk.UpdateCommand)
    .filter((c) => c.args[0].input.ExpressionAttributeValues?.[':aside'] !== undefined)
    .map((c) => String(c.args[0].input.Key?.sk));

// ---------------------------------------------------------------- relay

describe('outbox relay', () => {
  test('every event goes to the FIFO queue (group = entityId, dedup id = eventId), ThingHappened also to the standard queue', async () => {
    const events = [happened('thing-1'), undone('thing-1'), happened('thing-2')];

    const response = await runRelay(...events.map(insertOf));

    expect(response.batchItemFailures).toEqual([]);
    const fifo = batchSends(relay, FIFO_URL).flat();
    // In record order: FIFO delivers an entity's events in the order they are sent.
    expect(fifo.map((e) => [e.MessageGroupId, e.MessageDeduplicationId])).toEqual([
      ['thing-1', 'thing-1:happened'],
      ['thing-1', 'thing-1:undone'],
      ['thing-2', 'thing-2:happened'],
    ]);
    expect(fifo.map((e) => JSON.parse(String(e.MessageBody)))).toEqual(events);
    expect(fifo[1].MessageAttributes).toEqual({
      eventId: { DataType: 'String', StringValue: 'thing-1:undone' },
      type: { DataType: 'String', StringValue: 'ThingUndone' },
      traceparent: { DataType: 'String', StringValue: expect.stringMatching(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/) },
    });
    expect(fifo.every((e) => /^[A-Za-z0-9_-]{1,80}$/.test(String(e.Id)))).toBe(true);

    const standard = batchSends(relay, STANDARD_URL).flat();
    expect(standard.map((e) => JSON.parse(String(e.MessageBody)))).toEqual([events[0], events[2]]);
    expect(standard.every((e) => e.MessageGroupId === undefined && e.MessageDeduplicationId === undefined)).toBe(true);
  });

  test('ThingUndone goes to the FIFO queue only', async () => {
    await runRelay(insertOf(undone('thing-1')));

    expect(sentEventIds(relay, FIFO_URL)).toEqual(['thing-1:undone']);
    expect(batchSends(relay, STANDARD_URL)).toEqual([]);
  });

  test.each([
    ['the FIFO queue', FIFO_URL],
    ['the standard queue', STANDARD_URL],
  ])(
    'one entry failing in a batch sent to %s fails exactly that record, and it is not marked dispatched',
    async (_where, failingQueue) => {
      const records = ['thing-1', 'thing-2', 'thing-3', 'thing-4'].map((o) => insertOf(happened(o)));
      relay.sqs
        .on(relay.sqsSdk.SendMessageBatchCommand)
        .callsFake(
          acceptEntries(
            (queueUrl, entry) =>
              queueUrl === failingQueue && entry.MessageAttributes?.eventId?.StringValue === 'thing-3:happened',
          ),
        );

      const response = await runRelay(...records);

      expect(failedSeqs(response)).toEqual([seqOf(records[2])]);
      expect(markedEventIds(relay).sort()).toEqual(['thing-1:happened', 'thing-2:happened', 'thing-4:happened']);
    },
  );

  test('an entry missing from both Successful and Failed is treated as failed', async () => {
    const records = [insertOf(undone('thing-1')), insertOf(undone('thing-2'))];
    relay.sqs.on(relay.sqsSdk.SendMessageBatchCommand).callsFake((input: SendMessageBatchCommandInput) => ({
      Successful: [{ Id: input.Entries?.[0].Id, MessageId: 'm', MD5OfMessageBody: 'md5' }],
      Failed: [],
    }));

    const response = await runRelay(...records);

    expect(failedSeqs(response)).toEqual([seqOf(records[1])]);
  });

  test('a whole SendMessageBatch call failing fails every record of that chunk, and only those', async () => {
    const records = Array.from({ length: 12 }, (_, i) => insertOf(undone(`thing-${i}`)));
    relay.sqs
      .on(relay.sqsSdk.SendMessageBatchCommand)
      .rejectsOnce(Object.assign(new Error('Service unavailable'), { name: 'ServiceUnavailable' }))
      .callsFake(acceptEntries());

    const response = await runRelay(...records);

    expect(failedSeqs(response)).toEqual(records.slice(0, 10).map(seqOf));
    expect(markedEventIds(relay)).toEqual(['thing-10:undone', 'thing-11:undone']);
  });

  test('the standard queue failing fails the ThingHappened records even though the FIFO queue took them', async () => {
    const records = [insertOf(happened('thing-1')), insertOf(undone('thing-1')), insertOf(happened('thing-2'))];
    relay.sqs.on(relay.sqsSdk.SendMessageBatchCommand, { QueueUrl: STANDARD_URL }).rejects(new Error('throttled'));

    const response = await runRelay(...records);

    expect(failedSeqs(response)).toEqual([seqOf(records[0]), seqOf(records[2])]);
    expect(markedEventIds(relay)).toEqual(['thing-1:undone']);
  });

  test('more than 10 events are sent in chunks of at most 10, every event exactly once, in order', async () => {
    const events = Array.from({ length: 23 }, (_, i) => happened(`thing-${String(i).padStart(2, '0')}`));

    const response = await runRelay(...events.map(insertOf));

    expect(response.batchItemFailures).toEqual([]);
    expect(batchSends(relay, FIFO_URL).map((chunk) => chunk.length)).toEqual([10, 10, 3]);
    expect(batchSends(relay, STANDARD_URL).map((chunk) => chunk.length)).toEqual([10, 10, 3]);
    expect(sentEventIds(relay, FIFO_URL)).toEqual(events.map((e) => e.eventId));
    expect(sentEventIds(relay, STANDARD_URL)).toEqual(events.map((e) => e.eventId));
    expect(markedEventIds(relay)).toHaveLength(23);
  });

  test('records that are not outbox INSERTs are ignored: nothing sent, nothing marked, nothing failed', async () => {
    const event = happened('thing-1');
    const dispatched = { ...outboxItem(event), dispatchedAt: '2030-01-02T03:04:06.000Z', pendingShard: undefined };
    const ignored = [
      streamRecord('MODIFY', dispatched), // the relay's own dispatch mark
      streamRecord('INSERT', {
        pk: 'THING#thing-1',
        sk: 'THING',
        entity: 'THING',
        thingId: 'thing-1',
        status: 'HAPPENED',
      }),
      streamRecord('MODIFY', {
        pk: 'THING#thing-1',
        sk: 'THING',
        entity: 'THING',
        thingId: 'thing-1',
        status: 'UNDONE',
      }),
      streamRecord('REMOVE', undefined),
      streamRecord('INSERT', undefined), // keys only
    ];

    const response = await runRelay(...ignored);

    expect(response.batchItemFailures).toEqual([]);
    expect(relay.sqs.calls()).toHaveLength(0);
    expect(relay.doc.calls()).toHaveLength(0);
  });

  test('among ignored records, the outbox INSERT alone is relayed', async () => {
    const response = await runRelay(
      streamRecord('INSERT', { pk: 'THING#thing-1', sk: 'THING', entity: 'THING' }),
      insertOf(happened('thing-1')),
      streamRecord('MODIFY', { ...outboxItem(happened('thing-0')), dispatchedAt: 'x' }),
    );

    expect(response.batchItemFailures).toEqual([]);
    expect(sentEventIds(relay, FIFO_URL)).toEqual(['thing-1:happened']);
    expect(markedEventIds(relay)).toEqual(['thing-1:happened']);
  });

  test.each([
    ['without a readable event', (item: Record<string, unknown>) => ({ ...item, event: undefined })],
    [
      'whose event SQS would refuse (U+FFFE)',
      (item: Record<string, unknown>) => {
        const event = item.event as EventEnvelope;
        return { ...item, event: { ...event, payload: { ...(event.payload as object), label: 'c\uFFFE' } } };
      },
    ],
  ])(
    'an outbox INSERT %s is skipped and counted, not retried (it never could succeed); the others are relayed',
    async (_name, breakIt) => {
      jest.spyOn(relay.metrics, 'addMetric');
      const good = insertOf(happened('thing-1'));
      const malformed = streamRecord('INSERT', breakIt(outboxItem(happened('thing-2'))));

      const response = await runRelay(good, malformed);

      expect(response.batchItemFailures).toEqual([]);
      expect(sentEventIds(relay, FIFO_URL)).toEqual(['thing-1:happened']);
      expect(markedEventIds(relay)).toEqual(['thing-1:happened']);
      expect(jest.mocked(relay.metrics.addMetric).mock.calls.filter((c) => c[0] === 'MalformedOutboxItem')).toEqual([
        ['MalformedOutboxItem', 'Count', 1],
      ]);
    },
  );

  test('a published event is marked dispatched: pendingShard removed, only if the item exists', async () => {
    const event = happened('thing-1');

    await runRelay(insertOf(event));

    const marks = relay.doc.commandCalls(relay.docSdk.UpdateCommand).map((c) => c.args[0].input);
    expect(marks).toEqual([
      expect.objectContaining({
        TableName: OUTBOX_TABLE,
        Key: { pk: 'THING#thing-1', sk: 'OUTBOX#thing-1:happened' },
        UpdateExpression: expect.stringMatching(/REMOVE pendingShard/),
        ConditionExpression: 'attribute_exists(pk)',
      }),
    ]);
    expect(marks[0].UpdateExpression).toMatch(/SET dispatchedAt = if_not_exists\(dispatchedAt, :at\)/);
  });

  test('a failed mark reports that record (the retry may publish again; consumers dedupe)', async () => {
    const records = [insertOf(happened('thing-1')), insertOf(happened('thing-2'))];
    relay.doc
      .on(relay.docSdk.UpdateCommand, { Key: { sk: 'OUTBOX#thing-2:happened' } })
      .rejects(new Error('throttled'));

    const response = await runRelay(...records);

    expect(failedSeqs(response)).toEqual([seqOf(records[1])]);
    expect(sentEventIds(relay, FIFO_URL)).toEqual(['thing-1:happened', 'thing-2:happened']);
  });

  test('an empty batch does nothing', async () => {
    const response = await runRelay();

    expect(response.batchItemFailures).toEqual([]);
    expect(relay.sqs.calls()).toHaveLength(0);
  });

  test('an event of a type no consumer takes is sent nowhere and marked dispatched, so it does not hold the shard', async () => {
    const shipped = {
      ...happened('thing-1'),
      eventId: 'thing-1:shipped',
      type: 'ThingShipped',
    } as unknown as EventEnvelope;

    const response = await runRelay(insertOf(shipped), insertOf(undone('thing-2')));

    expect(response.batchItemFailures).toEqual([]);
    expect(sentEventIds(relay, FIFO_URL)).toEqual(['thing-2:undone']);
    expect(batchSends(relay, STANDARD_URL)).toEqual([]);
    expect(markedEventIds(relay)).toEqual(['thing-1:shipped', 'thing-2:undone']);
  });
});

describe('the relay and the sweeper read their routes once, at cold start', () => {
  afterEach(() => {
    process.env.CONSUMER_ROUTES = JSON.stringify(ROUTES);
  });

  test.each([
    ['not JSON', '[{"consumer":', /CONSUMER_ROUTES is not JSON/],
    ['an empty list', '[]', /CONSUMER_ROUTES is not a list of consumer routes/],
    [
      'a route without its queue',
      JSON.stringify([{ consumer: 'probe', fifo: false, eventTypes: ['ThingHappened'] }]),
      /CONSUMER_ROUTES is not a list of consumer routes: 0\.queueUrl/,
    ],
    [
      'a route taking no event type',
      JSON.stringify([{ consumer: 'probe', queueUrl: STANDARD_URL, fifo: false, eventTypes: [] }]),
      /0\.eventTypes/,
    ],
  ])(
    'CONSUMER_ROUTES that is %s stops the function from loading, naming the variable',
    async (_what, routes, error) => {
      for (const module of ['outbox-relay', 'outbox-sweeper'] as const) {
        const loading = loadWithMockedSdk(
          {
            OUTBOX_TABLE_NAME: OUTBOX_TABLE,
            OUTBOX_ENTITY_PARTITION_PREFIX: ENTITY_PREFIX,
            OUTBOX_DISPATCHED_RETENTION_SECONDS: '604800',
            CONSUMER_ROUTES: routes,
            OUTBOX_SWEEP_AGE_SECONDS: '300',
          },
          () =>
            module === 'outbox-relay'
              ? import('@exactly-once/runtime/wiring/handlers/relay-handler')
              : import('@exactly-once/runtime/wiring/handlers/sweeper-handler'),
        );

        await expect(loading).rejects.toThrow(error);
      }
    },
  );

  test('without CONSUMER_ROUTES the function does not load', async () => {
    delete process.env.CONSUMER_ROUTES;

    const loading = loadWithMockedSdk(
      { OUTBOX_TABLE_NAME: OUTBOX_TABLE, OUTBOX_ENTITY_PARTITION_PREFIX: ENTITY_PREFIX },
      () => import('@exactly-once/runtime/wiring/handlers/relay-handler'),
    );

    await expect(loading).rejects.toThrow(/CONSUMER_ROUTES/);
  });
});

// ---------------------------------------------------------------- sweeper

describe('outbox sweeper', () => {
  /**
   * The pending-outbox index: Query honours the partition (`pendingShard`), `createdAt < :before`, order and
   * Limit; a dispatch mark removes the item from it, setting it aside moves it to its partition (conditions
   * as DynamoDB evaluates them). An entry is an event (stored as the repository writes it) or a raw stored
   * item. Returns the items still in the index, which the tests read.
   */
  function fakePendingIndex(
    entries: ({ event: EventEnvelope; createdAt: string } | { item: Record<string, unknown> })[],
    options: { setAsideFailsOnce?: Error } = {},
  ) {
    const pending = entries.map((e) => ('item' in e ? e.item : outboxItem(e.event, e.createdAt)));
    // The base table: every item, dispatched or not.
    const everything = [...pending];
    const find = (key: Record<string, unknown> | undefined) =>
      everything.find((i) => i.pk === key?.pk && i.sk === key?.sk);
    sweeper.doc.on(sweeper.docSdk.QueryCommand).callsFake((input: QueryCommandInput) => {
      const values = input.ExpressionAttributeValues ?? {};
      const before = values[':before'] as string | undefined;
      const matches = pending
        .filter((p) => p.pendingShard === values[':s'] && (before === undefined || String(p.createdAt) < before))
        .sort((a, b) => String(a.createdAt).localeCompare(String(b.createdAt)));
      return { Items: matches.slice(0, input.Limit) };
    });
    sweeper.doc.on(sweeper.docSdk.UpdateCommand).callsFake((input: UpdateCommandInput) => {
      const item = find(input.Key);
      const values = input.ExpressionAttributeValues ?? {};
      if (String(input.UpdateExpression).includes('REMOVE pendingShard')) {
        if (item === undefined) throw Object.assign(new Error('gone'), { name: 'ConditionalCheckFailedException' });
        const wasDispatched = item.dispatchedAt !== undefined;
        item.dispatchedAt ??= values[':at'];
        delete item.pendingShard;
        pending.splice(pending.indexOf(item), pending.includes(item) ? 1 : 0);
        return wasDispatched ? { Attributes: { dispatchedAt: item.dispatchedAt } } : {};
      }
      // Setting aside: `pendingShard <> :aside AND attribute_not_exists(dispatchedAt)`.
      const failure = options.setAsideFailsOnce;
      options.setAsideFailsOnce = undefined;
      if (failure !== undefined) throw failure;
      const aside = values[':aside'];
      if (item?.pendingShard === undefined || item.pendingShard === aside || item.dispatchedAt !== undefined)
        throw Object.assign(new Error('The conditional request failed'), { name: 'ConditionalCheckFailedException' });
      Object.assign(item, { pendingShard: aside, malformedAt: values[':at'], malformedReason: values[':reason'] });
      return {};
    });
    // The base table, read consistently: the sweeper re-reads each candidate before trusting the index.
    sweeper.doc.on(sweeper.docSdk.BatchGetCommand).callsFake((input: BatchGetCommandInput) => {
      const [[table, request]] = Object.entries(input.RequestItems ?? {});
      const items = (request.Keys ?? []).flatMap((key) => {
        const i = find(key);
        return i === undefined
          ? []
          : [{ pk: i.pk, sk: i.sk, dispatchedAt: i.dispatchedAt, pendingShard: i.pendingShard }];
      });
      return { Responses: { [table]: items } };
    });
    return pending;
  }

  const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();
  const sweep = () => sweeper.handler({}, lambdaContext());
  const metric = (name: string) =>
    (jest.mocked(sweeper.metrics.addMetric).mock.calls.find((c) => c[0] === name) ?? [])[2] as number | undefined;

  beforeEach(() => {
    jest.spyOn(sweeper.metrics, 'addMetric');
  });

  test('republishes only items pending longer than the sweep age, oldest first, and marks them dispatched', async () => {
    fakePendingIndex([
      { event: happened('thing-young'), createdAt: ago(60) },
      { event: undone('thing-old'), createdAt: ago(400) },
      { event: happened('thing-oldest'), createdAt: ago(1_200) },
      { event: happened('thing-edge'), createdAt: ago(SWEEP_AGE_SECONDS - 5) },
    ]);

    const result = await sweep();

    expect(sentEventIds(sweeper, FIFO_URL)).toEqual(['thing-oldest:happened', 'thing-old:undone']);
    expect(sentEventIds(sweeper, STANDARD_URL)).toEqual(['thing-oldest:happened']);
    expect(batchSends(sweeper, FIFO_URL).flat()[0]).toMatchObject({
      MessageGroupId: 'thing-oldest',
      MessageDeduplicationId: 'thing-oldest:happened',
    });
    expect(markedEventIds(sweeper).sort()).toEqual(['thing-old:undone', 'thing-oldest:happened']);
    expect(result).toMatchObject({ republished: 2, failed: 0 });
    expect(metric('OutboxEventsSwept')).toBe(2);
  });

  test('queries the pendingOutbox index only, every shard, with the cut-off at now - sweep age', async () => {
    fakePendingIndex([]);
    const before = Date.now();

    await sweep();

    const queries = sweeper.doc.commandCalls(sweeper.docSdk.QueryCommand).map((c) => c.args[0].input);
    expect(queries.every((q) => q.TableName === OUTBOX_TABLE && q.IndexName === 'pendingOutbox')).toBe(true);
    const cutOffs = queries.filter((q) => q.ExpressionAttributeValues?.[':before'] !== undefined);
    expect(new Set(cutOffs.map((q) => q.ExpressionAttributeValues?.[':s']))).toEqual(
      new Set(Array.from({ length: PENDING_SHARDS }, (_, i) => String(i))),
    );
    for (const q of cutOffs) {
      const cutOff = Date.parse(String(q.ExpressionAttributeValues?.[':before']));
      expect(cutOff).toBeGreaterThanOrEqual(before - SWEEP_AGE_SECONDS * 1000);
      expect(cutOff).toBeLessThanOrEqual(Date.now() - SWEEP_AGE_SECONDS * 1000);
      expect(q.KeyConditionExpression).toBe('pendingShard = :s AND createdAt < :before');
    }
  });

  test('publishes OldestUndispatchedOutboxAgeSeconds: the oldest item still pending after the sweep', async () => {
    fakePendingIndex([
      { event: happened('thing-young'), createdAt: ago(90) },
      { event: happened('thing-old'), createdAt: ago(1_000) },
    ]);

    const result = await sweep();

    // thing-old was republished and marked; thing-young is the oldest left.
    expect(metric('OldestUndispatchedOutboxAgeSeconds')).toBeGreaterThanOrEqual(90);
    expect(metric('OldestUndispatchedOutboxAgeSeconds')).toBeLessThan(100);
    expect(result.oldestPendingAgeSeconds).toBe(metric('OldestUndispatchedOutboxAgeSeconds'));
  });

  test('with nothing pending: nothing sent, and the oldest age is 0', async () => {
    fakePendingIndex([]);

    const result = await sweep();

    expect(sweeper.sqs.calls()).toHaveLength(0);
    expect(result).toEqual({ republished: 0, failed: 0, malformed: [], oldestPendingAgeSeconds: 0 });
    expect(metric('OldestUndispatchedOutboxAgeSeconds')).toBe(0);
  });

  test('a republish that fails throws (errors alarm, async DLQ), after publishing the age of what is stuck', async () => {
    fakePendingIndex([
      { event: undone('thing-stuck'), createdAt: ago(2_000) },
      { event: undone('thing-ok'), createdAt: ago(1_000) },
    ]);
    sweeper.sqs
      .on(sweeper.sqsSdk.SendMessageBatchCommand)
      .callsFake(
        acceptEntries((_queue, entry) => entry.MessageAttributes?.eventId?.StringValue === 'thing-stuck:undone'),
      );

    await expect(sweep()).rejects.toThrow('1 outbox events could not be republished');

    expect(markedEventIds(sweeper)).toEqual(['thing-ok:undone']);
    expect(metric('OldestUndispatchedOutboxAgeSeconds')).toBeGreaterThanOrEqual(2_000);
    expect(metric('OldestUndispatchedOutboxAgeSeconds')).toBeLessThan(2_010);
  });
  describe('a malformed pending item is logged, counted and set aside; the sweep goes on', () => {
    /** A stored outbox item whose event is broken by `breakIt`, pending in the shard its event id maps to. */
    function malformedItem(breakIt: (event: Record<string, unknown>) => unknown, entityId = 'thing-bad') {
      const good = outboxItem(happened(entityId), ago(1_500));
      return { item: { ...good, event: breakIt({ ...(good.event as Record<string, unknown>) }) } };
    }
    const malformedMetricCalls = () =>
      jest.mocked(sweeper.metrics.addMetric).mock.calls.filter((c) => c[0] === 'MalformedOutboxItem');

    test('[valid, malformed, valid]: both valid ones published and marked, the metric once (1), no throw', async () => {
      const pending = fakePendingIndex([
        { event: happened('thing-first'), createdAt: ago(2_000) },
        malformedItem((event) => ({ ...event, payload: { ...(event.payload as object), label: 'label-\uFFFE' } })),
        { event: undone('thing-last'), createdAt: ago(1_000) },
      ]);

      const result = await sweep();

      expect(sentEventIds(sweeper, FIFO_URL)).toEqual(['thing-first:happened', 'thing-last:undone']);
      expect(markedEventIds(sweeper).sort()).toEqual(['thing-first:happened', 'thing-last:undone']);
      expect(malformedMetricCalls()).toEqual([['MalformedOutboxItem', 'Count', 1]]);
      expect(result).toMatchObject({ republished: 2, failed: 0 });
      expect(result.malformed).toEqual([
        {
          itemKey: 'THING#thing-bad/OUTBOX#thing-bad:happened',
          createdAt: expect.any(String),
          reason: expect.stringMatching(/U\+FFFE/),
          setAside: true,
        },
      ]);
      // Set aside, not dropped: still undispatched and in the index, in the set-aside partition.
      expect(pending.map((p) => [p.sk, p.pendingShard, p.dispatchedAt])).toEqual([
        ['OUTBOX#thing-bad:happened', 'malformed', undefined],
      ]);
      expect(pending[0].malformedReason).toMatch(/U\+FFFE/);
    });

    test.each([
      ['no event at all', () => undefined],
      [
        'an event that is not an envelope (no type)',
        (event: Record<string, unknown>) => ({ ...event, type: undefined }),
      ],
      ['an event with no version', (event: Record<string, unknown>) => ({ ...event, version: 0 })],
      [
        'a payload field holding U+FFFF',
        (event: Record<string, unknown>) => ({
          ...event,
          payload: { ...(event.payload as object), label: 'label-\uFFFF' },
        }),
      ],
      [
        'an entityId that cannot be a FIFO group id',
        (event: Record<string, unknown>) => ({ ...event, entityId: 'thing bad' }),
      ],
    ])('%s: skipped and counted, the valid item still published', async (_name, breakIt) => {
      fakePendingIndex([malformedItem(breakIt), { event: happened('thing-ok'), createdAt: ago(1_000) }]);

      const result = await sweep();

      expect(sentEventIds(sweeper, FIFO_URL)).toEqual(['thing-ok:happened']);
      expect(malformedMetricCalls()).toEqual([['MalformedOutboxItem', 'Count', 1]]);
      expect(result.malformed).toHaveLength(1);
    });

    test('an event written before identifiers were restricted (a space in its ids) is deliverable, so it is published', async () => {
      const event = happened('thing-legacy');
      const legacy = {
        ...event,
        payload: { ...event.payload, ownerId: 'owner 1', label: 'label 1' },
      };
      fakePendingIndex([{ event: legacy, createdAt: ago(1_000) }]);

      const result = await sweep();

      expect(sentEventIds(sweeper, FIFO_URL)).toEqual(['thing-legacy:happened']);
      expect(result.malformed).toEqual([]);
    });

    test('a sweep with nothing malformed publishes the metric as 0, so its alarm always has data', async () => {
      fakePendingIndex([{ event: happened('thing-ok'), createdAt: ago(1_000) }]);

      await sweep();

      expect(malformedMetricCalls()).toEqual([['MalformedOutboxItem', 'Count', 0]]);
    });

    test('it is published in the same EMF document, namespace and dimensions as OldestUndispatchedOutboxAgeSeconds', async () => {
      fakePendingIndex([malformedItem(() => undefined)]);
      const documents: ReturnType<typeof sweeper.metrics.serializeMetrics>[] = [];
      jest.spyOn(sweeper.metrics, 'publishStoredMetrics').mockImplementation(() => {
        documents.push(sweeper.metrics.serializeMetrics());
        sweeper.metrics.clearMetrics();
        return sweeper.metrics;
      });

      await sweep();

      const directives = documents.flatMap((d) => d._aws.CloudWatchMetrics);
      const directiveOf = (name: string) => directives.find((d) => d.Metrics.some((m) => m.Name === name));
      expect(directiveOf('MalformedOutboxItem')).toBeDefined();
      expect(directiveOf('MalformedOutboxItem')).toBe(directiveOf('OldestUndispatchedOutboxAgeSeconds'));
      expect(documents.find((d) => 'MalformedOutboxItem' in d)).toMatchObject({
        MalformedOutboxItem: 1,
        service: 'unit-test',
      });
    });

    test('a full read (SWEEP_MAX_ITEMS) of malformed items older than a good one does not hide it: set aside by one sweep, the next publishes it', async () => {
      const { maxItems: SWEEP_MAX_ITEMS, maxSetAside: SWEEP_MAX_SET_ASIDE } = sweepLimits;
      const bad = Array.from({ length: SWEEP_MAX_ITEMS }, (_, i) => {
        const { item } = malformedItem(() => undefined, `thing-bad${String(i).padStart(3, '0')}`);
        return { item: { ...item, createdAt: ago(5_000 - i) } };
      });
      const pending = fakePendingIndex([...bad, { event: happened('thing-newer'), createdAt: ago(1_000) }]);

      const first = await sweep();
      const second = await sweep();
      const third = await sweep();

      // The first sweep reads only the oldest SWEEP_MAX_ITEMS: every one malformed, every one set aside.
      expect(first).toMatchObject({ republished: 0, failed: 0 });
      expect(first.malformed).toHaveLength(SWEEP_MAX_ITEMS);
      expect(first.malformed.every((m) => m.setAside)).toBe(true);
      expect(setAsideKeys(sweeper)).toHaveLength(SWEEP_MAX_ITEMS);
      // The next one reaches the event behind them.
      expect(second).toMatchObject({ republished: 1, failed: 0 });
      expect(sentEventIds(sweeper, FIFO_URL)).toEqual(['thing-newer:happened']);
      // Still undispatched, all of them; and still reported, so the malformed-outbox-item alarm keeps firing.
      expect(pending.filter((p) => p.pendingShard === 'malformed')).toHaveLength(SWEEP_MAX_ITEMS);
      expect(malformedMetricCalls().map((c) => c[2])).toEqual([
        SWEEP_MAX_ITEMS,
        SWEEP_MAX_SET_ASIDE,
        SWEEP_MAX_SET_ASIDE,
      ]);
      expect(third).toMatchObject({ republished: 0, failed: 0 });
      // Set aside once: later sweeps only re-read them.
      expect(setAsideKeys(sweeper)).toHaveLength(SWEEP_MAX_ITEMS);
      // They are still the oldest undispatched items: the age alarm sees them too.
      expect(third.oldestPendingAgeSeconds).toBeGreaterThanOrEqual(5_000);
    });

    test('a set-aside item is reported on every sweep until repaired; the next sweep publishes the repaired item', async () => {
      const broken = malformedItem((event) => ({ ...event, version: 0 }), 'thing-fixme');
      const pending = fakePendingIndex([broken]);

      const first = await sweep();
      const second = await sweep();
      // An operator repairs the event in place (runbook, "Malformed outbox item"), leaving the rest as it is.
      pending[0].event = happened('thing-fixme');
      const third = await sweep();
      const fourth = await sweep();

      expect([first.malformed, second.malformed].map((m) => m.map((i) => i.itemKey))).toEqual([
        ['THING#thing-fixme/OUTBOX#thing-fixme:happened'],
        ['THING#thing-fixme/OUTBOX#thing-fixme:happened'],
      ]);
      expect(malformedMetricCalls().map((c) => c[2])).toEqual([1, 1, 0, 0]);
      expect(third).toMatchObject({ republished: 1, failed: 0, malformed: [], oldestPendingAgeSeconds: 0 });
      expect(sentEventIds(sweeper, FIFO_URL)).toEqual(['thing-fixme:happened']);
      expect(markedEventIds(sweeper)).toEqual(['thing-fixme:happened']);
      expect(pending).toEqual([]); // dispatched: out of the index
      expect(fourth).toMatchObject({ republished: 0, malformed: [] });
    });

    test('an item that fails to publish is not set aside: it stays in its shard and the next sweep retries it', async () => {
      const stuck = undone('thing-stuck');
      const pending = fakePendingIndex([{ event: stuck, createdAt: ago(2_000) }]);
      sweeper.sqs
        .on(sweeper.sqsSdk.SendMessageBatchCommand)
        .rejectsOnce(new Error('throttled'))
        .callsFake(acceptEntries());

      await expect(sweep()).rejects.toThrow('1 outbox events could not be republished');
      expect(setAsideKeys(sweeper)).toEqual([]);
      expect(pending.map((p) => p.pendingShard)).toEqual([pendingShardOf(stuck.eventId)]);

      await expect(sweep()).resolves.toMatchObject({ republished: 1, failed: 0 });
      expect(markedEventIds(sweeper)).toEqual(['thing-stuck:undone']);
    });

    test('setting an item aside failing is reported (the next sweep tries again), and the sweep goes on', async () => {
      const pending = fakePendingIndex(
        [malformedItem(() => undefined), { event: happened('thing-ok'), createdAt: ago(1_000) }],
        {
          setAsideFailsOnce: Object.assign(new Error('Throughput exceeded'), {
            name: 'ProvisionedThroughputExceededException',
          }),
        },
      );

      const first = await sweep();
      const second = await sweep();

      expect(first).toMatchObject({ republished: 1, failed: 0 });
      expect(first.malformed.map((m) => m.setAside)).toEqual([false]);
      expect(second.malformed.map((m) => m.setAside)).toEqual([true]);
      expect(pending.map((p) => p.pendingShard)).toEqual(['malformed']);
    });
  });
});

describe('the outbox store re-reads what the pending index lists (base table, consistent)', () => {
  type Key = { pk: string; sk: string };
  const item = (id: string): Key => ({ pk: `THING#${id}`, sk: `OUTBOX#${id}` });
  const listed = ['a', 'b', 'c', 'd'].map((id) => ({
    ...item(id),
    event: {},
    createdAt: `2030-01-01T00:00:00.00${id}Z`,
    pendingShard: '0',
  }));
  /** The base item as BatchGetItem projects it, still pending in shard 0. */
  const base = (id: string) => ({ ...item(id), pendingShard: '0' });

  /** The index lists `listed` on shard 0; `answer` plays the base table's BatchGetItem, one call at a time. */
  function storeWith(answer: (keys: Key[], call: number) => { items: object[]; unprocessed?: Key[] }) {
    const batchGets: Key[][] = [];
    const client = {
      send: async (command: unknown) => {
        if (command instanceof QueryCommand)
          return { Items: command.input.ExpressionAttributeValues?.[':s'] === '0' ? listed : [] };
        if (command instanceof BatchGetCommand) {
          const keys = (command.input.RequestItems?.outbox.Keys ?? []) as Key[];
          batchGets.push(keys);
          const { items, unprocessed } = answer(keys, batchGets.length);
          return {
            Responses: { outbox: items },
            UnprocessedKeys: unprocessed ? { outbox: { Keys: unprocessed } } : {},
          };
        }
        throw new Error('unexpected command');
      },
    } as unknown as DynamoDBDocumentClient;
    return { store: new DynamoDbOutboxStore(client, 'outbox', ENTITY_PREFIX), batchGets };
  }

  test('a dispatched or vanished item is dropped, and unprocessed keys are asked again', async () => {
    const { store, batchGets } = storeWith((keys, call) =>
      call === 1
        ? { items: [base('a'), { ...item('b'), dispatchedAt: 'x' }], unprocessed: [item('c')] } // d: gone
        : { items: keys.map((k) => ({ ...k, pendingShard: '0' })) },
    );

    const pending = await store.pendingOlderThan(new Date('2031-01-01T00:00:00Z'), 10);

    expect(pending.map((p) => p.itemKey)).toEqual(['THING#a/OUTBOX#a', 'THING#c/OUTBOX#c']);
    expect(batchGets).toEqual([listed.map(({ pk, sk }) => ({ pk, sk })), [item('c')]]);
  });

  test('an item the base table shows in another partition (set aside since the index listed it) is dropped', async () => {
    const { store } = storeWith(() => ({
      items: [base('a'), { ...item('b'), pendingShard: 'malformed' }, { ...item('c'), pendingShard: '3' }, base('d')],
    }));

    const pending = await store.pendingOlderThan(new Date('2031-01-01T00:00:00Z'), 10);

    expect(pending.map((p) => p.itemKey)).toEqual(['THING#a/OUTBOX#a', 'THING#d/OUTBOX#d']);
  });

  test('keys still unprocessed after 5 rounds fail the read (the sweep retries), never count as pending', async () => {
    const { store, batchGets } = storeWith((keys) => ({ items: [], unprocessed: keys }));

    await expect(store.pendingOlderThan(new Date('2031-01-01T00:00:00Z'), 10)).rejects.toThrow(
      'BatchGetItem left keys unprocessed',
    );
    expect(batchGets).toHaveLength(5);
  });
});

describe('relayOutboxEvents marks what it published, a bounded number at a time', () => {
  test('500 published events: never more than 25 dispatched marks in flight, every one marked, failures reported by id', async () => {
    const events = Array.from({ length: 500 }, (_, i) => ({ eventId: `evt-${i}` }) as EventEnvelope);
    let inFlight = 0;
    let most = 0;
    const marked: string[] = [];
    const outbox = {
      markDispatched: async (event: { eventId: string }) => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        await new Promise((resolve) => setImmediate(resolve));
        inFlight -= 1;
        if (event.eventId === 'evt-7') throw new Error('throttled');
        marked.push(event.eventId);
        return true;
      },
    } as unknown as OutboxStore;

    const failed = await relayOutboxEvents(events, {
      publisher: { publish: async () => new Set<string>() },
      outbox,
      now: () => new Date(),
    });

    expect(most).toBe(MARKS_IN_FLIGHT);
    expect(MARKS_IN_FLIGHT).toBeLessThan(50);
    expect(marked).toHaveLength(499);
    expect(failed).toEqual(new Set(['evt-7']));
  });

  test('300 malformed pending items: never more than 25 set-asides in flight, every one set aside', async () => {
    const items = Array.from({ length: 300 }, (_, i) => ({
      itemKey: `THING#o${i}/OUTBOX#e${i}`,
      createdAt: '2026-12-05T10:00:00.000Z',
      event: { not: 'an event' },
    }));
    let inFlight = 0;
    let most = 0;
    const outbox = {
      pendingOlderThan: async () => items,
      setAsideItems: async () => [],
      setAside: async () => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        await new Promise((resolve) => setImmediate(resolve));
        inFlight -= 1;
        return true;
      },
      oldestPendingCreatedAt: async () => undefined,
    } as unknown as OutboxStore;

    const result = await sweepOutbox({
      publisher: { publish: async () => new Set<string>() },
      outbox,
      now: () => new Date('2026-12-05T11:00:00.000Z'),
      minAgeSeconds: 300,
      maxItems: 500,
      maxSetAside: 500,
    });

    expect(most).toBe(MARKS_IN_FLIGHT);
    expect(result.malformed.filter((m) => m.setAside)).toHaveLength(300);
  });
});
