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
import { DynamoDbOutboxStore } from '../../lambdas/exactly-once/aws/dynamodb-outbox-store';
import { pendingShardOf, PENDING_SHARDS } from '../../lambdas/exactly-once/aws/outbox-table';
import { CONSUMERS } from '../../lambdas/shop/consumers';
import type { OrderEvent } from '../../lambdas/shop/domain/events';
import type { ConsumerRoute } from '../../lambdas/exactly-once/outbox/routes';
import { lambdaContext } from '../support/api-events';
import { cancelledEvent as cancelled, placedEvent as placed } from '../support/orders';
import { acceptEntries, loadWithMockedSdk, type MockedSdkHandler } from '../support/mocked-sdk';
import { ORDER_PK_PREFIX } from '../../lambdas/shop/aws/order-table';
import { MARKS_IN_FLIGHT, relayOutboxEvents, sweepOutbox } from '../../lambdas/exactly-once/outbox/relay';
import type { OutboxStore } from '../../lambdas/exactly-once/outbox/ports';

/**
 * The outbox relay (stream -> queues) and the sweeper (schedule -> queues),
 * with SQS and DynamoDB mocked at the SDK, each handler in its own module
 * registry (loadWithMockedSdk).
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

const ORDERS_TABLE = 'orders-table';
const queueUrlOf = (consumer: string, fifo: boolean) =>
  `https://sqs.us-east-1.amazonaws.com/123456789012/${consumer}${fifo ? '.fifo' : ''}`;
const FIFO_URL = queueUrlOf('fulfilment', true);
const STANDARD_URL = queueUrlOf('loyalty', false);
const SWEEP_AGE_SECONDS = 300;
/**
 * The stack's routing: each consumer on the list at a queue of its own (fulfilment at FIFO_URL, loyalty at
 * STANDARD_URL), so a consumer added to the list (npm run new:consumer) changes nothing these tests count.
 */
const ROUTES: ConsumerRoute[] = CONSUMERS.map(({ name, fifo, eventTypes }) => ({
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
      OUTBOX_TABLE_NAME: ORDERS_TABLE,
      OUTBOX_ENTITY_PARTITION_PREFIX: 'ORDER#',
      OUTBOX_DISPATCHED_RETENTION_SECONDS: '604800',
      CONSUMER_ROUTES: JSON.stringify(ROUTES),
      OUTBOX_SWEEP_AGE_SECONDS: String(SWEEP_AGE_SECONDS),
    },
    () =>
      module === 'outbox-relay'
        ? import('../../lambdas/exactly-once/wiring/relay-handler')
        : import('../../lambdas/exactly-once/wiring/sweeper-handler').then((sweeperModule) => {
            sweepLimits = { maxItems: sweeperModule.SWEEP_MAX_ITEMS, maxSetAside: sweeperModule.SWEEP_MAX_SET_ASIDE };
            return sweeperModule;
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

function outboxItem(event: OrderEvent, createdAt = event.occurredAt): Record<string, unknown> {
  return {
    pk: `ORDER#${event.entityId}`,
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
      Keys: marshall({ pk: item?.pk ?? 'ORDER#x', sk: item?.sk ?? 'ORDER' }) as never,
      ...(item === undefined ? {} : { NewImage: marshall(item, { removeUndefinedValues: true }) as never }),
      SequenceNumber: String(sequence).padStart(21, '0'),
      SizeBytes: 256,
      StreamViewType: 'NEW_IMAGE',
    },
    eventSourceARN: 'arn:aws:dynamodb:us-east-1:123456789012:table/orders-table/stream/2030-01-01T00:00:00.000',
  };
}

const insertOf = (event: OrderEvent) => streamRecord('INSERT', outboxItem(event));
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
  test('every event goes to the FIFO queue (group = entityId, dedup id = eventId), OrderPlaced also to the standard queue', async () => {
    const events = [placed('ord-1'), cancelled('ord-1'), placed('ord-2')];

    const response = await runRelay(...events.map(insertOf));

    expect(response.batchItemFailures).toEqual([]);
    const fifo = batchSends(relay, FIFO_URL).flat();
    // In record order: FIFO delivers an order's events in the order they are sent.
    expect(fifo.map((e) => [e.MessageGroupId, e.MessageDeduplicationId])).toEqual([
      ['ord-1', 'ord-1.placed'],
      ['ord-1', 'ord-1.cancelled'],
      ['ord-2', 'ord-2.placed'],
    ]);
    expect(fifo.map((e) => JSON.parse(String(e.MessageBody)))).toEqual(events);
    expect(fifo[1].MessageAttributes).toEqual({
      eventId: { DataType: 'String', StringValue: 'ord-1.cancelled' },
      type: { DataType: 'String', StringValue: 'OrderCancelled' },
      traceparent: { DataType: 'String', StringValue: expect.stringMatching(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/) },
    });
    expect(fifo.every((e) => /^[A-Za-z0-9_-]{1,80}$/.test(String(e.Id)))).toBe(true);

    const standard = batchSends(relay, STANDARD_URL).flat();
    expect(standard.map((e) => JSON.parse(String(e.MessageBody)))).toEqual([events[0], events[2]]);
    expect(standard.every((e) => e.MessageGroupId === undefined && e.MessageDeduplicationId === undefined)).toBe(true);
  });

  test('OrderCancelled goes to the FIFO queue only', async () => {
    await runRelay(insertOf(cancelled('ord-1')));

    expect(sentEventIds(relay, FIFO_URL)).toEqual(['ord-1.cancelled']);
    expect(batchSends(relay, STANDARD_URL)).toEqual([]);
  });

  test.each([
    ['the FIFO queue', FIFO_URL],
    ['the standard queue', STANDARD_URL],
  ])(
    'one entry failing in a batch sent to %s fails exactly that record, and it is not marked dispatched',
    async (_where, failingQueue) => {
      const records = ['ord-1', 'ord-2', 'ord-3', 'ord-4'].map((o) => insertOf(placed(o)));
      relay.sqs
        .on(relay.sqsSdk.SendMessageBatchCommand)
        .callsFake(
          acceptEntries(
            (queueUrl, entry) =>
              queueUrl === failingQueue && entry.MessageAttributes?.eventId?.StringValue === 'ord-3.placed',
          ),
        );

      const response = await runRelay(...records);

      expect(failedSeqs(response)).toEqual([seqOf(records[2])]);
      expect(markedEventIds(relay).sort()).toEqual(['ord-1.placed', 'ord-2.placed', 'ord-4.placed']);
    },
  );

  test('an entry missing from both Successful and Failed is treated as failed', async () => {
    const records = [insertOf(cancelled('ord-1')), insertOf(cancelled('ord-2'))];
    relay.sqs.on(relay.sqsSdk.SendMessageBatchCommand).callsFake((input: SendMessageBatchCommandInput) => ({
      Successful: [{ Id: input.Entries?.[0].Id, MessageId: 'm', MD5OfMessageBody: 'md5' }],
      Failed: [],
    }));

    const response = await runRelay(...records);

    expect(failedSeqs(response)).toEqual([seqOf(records[1])]);
  });

  test('a whole SendMessageBatch call failing fails every record of that chunk, and only those', async () => {
    const records = Array.from({ length: 12 }, (_, i) => insertOf(cancelled(`ord-${i}`)));
    relay.sqs
      .on(relay.sqsSdk.SendMessageBatchCommand)
      .rejectsOnce(Object.assign(new Error('Service unavailable'), { name: 'ServiceUnavailable' }))
      .callsFake(acceptEntries());

    const response = await runRelay(...records);

    expect(failedSeqs(response)).toEqual(records.slice(0, 10).map(seqOf));
    expect(markedEventIds(relay)).toEqual(['ord-10.cancelled', 'ord-11.cancelled']);
  });

  test('the standard queue failing fails the OrderPlaced records even though the FIFO queue took them', async () => {
    const records = [insertOf(placed('ord-1')), insertOf(cancelled('ord-1')), insertOf(placed('ord-2'))];
    relay.sqs.on(relay.sqsSdk.SendMessageBatchCommand, { QueueUrl: STANDARD_URL }).rejects(new Error('throttled'));

    const response = await runRelay(...records);

    expect(failedSeqs(response)).toEqual([seqOf(records[0]), seqOf(records[2])]);
    expect(markedEventIds(relay)).toEqual(['ord-1.cancelled']);
  });

  test('more than 10 events are sent in chunks of at most 10, every event exactly once, in order', async () => {
    const events = Array.from({ length: 23 }, (_, i) => placed(`ord-${String(i).padStart(2, '0')}`));

    const response = await runRelay(...events.map(insertOf));

    expect(response.batchItemFailures).toEqual([]);
    expect(batchSends(relay, FIFO_URL).map((chunk) => chunk.length)).toEqual([10, 10, 3]);
    expect(batchSends(relay, STANDARD_URL).map((chunk) => chunk.length)).toEqual([10, 10, 3]);
    expect(sentEventIds(relay, FIFO_URL)).toEqual(events.map((e) => e.eventId));
    expect(sentEventIds(relay, STANDARD_URL)).toEqual(events.map((e) => e.eventId));
    expect(markedEventIds(relay)).toHaveLength(23);
  });

  test('records that are not outbox INSERTs are ignored: nothing sent, nothing marked, nothing failed', async () => {
    const event = placed('ord-1');
    const dispatched = { ...outboxItem(event), dispatchedAt: '2030-01-02T03:04:06.000Z', pendingShard: undefined };
    const ignored = [
      streamRecord('MODIFY', dispatched), // the relay's own dispatch mark
      streamRecord('INSERT', { pk: 'ORDER#ord-1', sk: 'ORDER', entity: 'ORDER', orderId: 'ord-1', status: 'PLACED' }),
      streamRecord('MODIFY', {
        pk: 'ORDER#ord-1',
        sk: 'ORDER',
        entity: 'ORDER',
        orderId: 'ord-1',
        status: 'CANCELLED',
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
      streamRecord('INSERT', { pk: 'ORDER#ord-1', sk: 'ORDER', entity: 'ORDER' }),
      insertOf(placed('ord-1')),
      streamRecord('MODIFY', { ...outboxItem(placed('ord-0')), dispatchedAt: 'x' }),
    );

    expect(response.batchItemFailures).toEqual([]);
    expect(sentEventIds(relay, FIFO_URL)).toEqual(['ord-1.placed']);
    expect(markedEventIds(relay)).toEqual(['ord-1.placed']);
  });

  test.each([
    ['without a readable event', (item: Record<string, unknown>) => ({ ...item, event: undefined })],
    [
      'whose event SQS would refuse (U+FFFE)',
      (item: Record<string, unknown>) => {
        const event = item.event as OrderEvent;
        return { ...item, event: { ...event, payload: { ...event.payload, customerId: 'c\uFFFE' } } };
      },
    ],
  ])(
    'an outbox INSERT %s is skipped and counted, not retried (it never could succeed); the others are relayed',
    async (_name, breakIt) => {
      jest.spyOn(relay.metrics, 'addMetric');
      const good = insertOf(placed('ord-1'));
      const malformed = streamRecord('INSERT', breakIt(outboxItem(placed('ord-2'))));

      const response = await runRelay(good, malformed);

      expect(response.batchItemFailures).toEqual([]);
      expect(sentEventIds(relay, FIFO_URL)).toEqual(['ord-1.placed']);
      expect(markedEventIds(relay)).toEqual(['ord-1.placed']);
      expect(jest.mocked(relay.metrics.addMetric).mock.calls.filter((c) => c[0] === 'MalformedOutboxItem')).toEqual([
        ['MalformedOutboxItem', 'Count', 1],
      ]);
    },
  );

  test('a published event is marked dispatched: pendingShard removed, only if the item exists', async () => {
    const event = placed('ord-1');

    await runRelay(insertOf(event));

    const marks = relay.doc.commandCalls(relay.docSdk.UpdateCommand).map((c) => c.args[0].input);
    expect(marks).toEqual([
      expect.objectContaining({
        TableName: ORDERS_TABLE,
        Key: { pk: 'ORDER#ord-1', sk: 'OUTBOX#ord-1.placed' },
        UpdateExpression: expect.stringMatching(/REMOVE pendingShard/),
        ConditionExpression: 'attribute_exists(pk)',
      }),
    ]);
    expect(marks[0].UpdateExpression).toMatch(/SET dispatchedAt = if_not_exists\(dispatchedAt, :at\)/);
  });

  test('a failed mark reports that record (the retry may publish again; consumers dedupe)', async () => {
    const records = [insertOf(placed('ord-1')), insertOf(placed('ord-2'))];
    relay.doc.on(relay.docSdk.UpdateCommand, { Key: { sk: 'OUTBOX#ord-2.placed' } }).rejects(new Error('throttled'));

    const response = await runRelay(...records);

    expect(failedSeqs(response)).toEqual([seqOf(records[1])]);
    expect(sentEventIds(relay, FIFO_URL)).toEqual(['ord-1.placed', 'ord-2.placed']);
  });

  test('an empty batch does nothing', async () => {
    const response = await runRelay();

    expect(response.batchItemFailures).toEqual([]);
    expect(relay.sqs.calls()).toHaveLength(0);
  });

  test('an event of a type no consumer takes is sent nowhere and marked dispatched, so it does not hold the shard', async () => {
    const shipped = { ...placed('ord-1'), eventId: 'ord-1.shipped', type: 'OrderShipped' } as unknown as OrderEvent;

    const response = await runRelay(insertOf(shipped), insertOf(cancelled('ord-2')));

    expect(response.batchItemFailures).toEqual([]);
    expect(sentEventIds(relay, FIFO_URL)).toEqual(['ord-2.cancelled']);
    expect(batchSends(relay, STANDARD_URL)).toEqual([]);
    expect(markedEventIds(relay)).toEqual(['ord-1.shipped', 'ord-2.cancelled']);
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
      JSON.stringify([{ consumer: 'loyalty', fifo: false, eventTypes: ['OrderPlaced'] }]),
      /CONSUMER_ROUTES is not a list of consumer routes: 0\.queueUrl/,
    ],
    [
      'a route taking no event type',
      JSON.stringify([{ consumer: 'loyalty', queueUrl: STANDARD_URL, fifo: false, eventTypes: [] }]),
      /0\.eventTypes/,
    ],
  ])(
    'CONSUMER_ROUTES that is %s stops the function from loading, naming the variable',
    async (_what, routes, error) => {
      for (const module of ['outbox-relay', 'outbox-sweeper'] as const) {
        const loading = loadWithMockedSdk(
          {
            OUTBOX_TABLE_NAME: ORDERS_TABLE,
            OUTBOX_ENTITY_PARTITION_PREFIX: 'ORDER#',
            OUTBOX_DISPATCHED_RETENTION_SECONDS: '604800',
            CONSUMER_ROUTES: routes,
            OUTBOX_SWEEP_AGE_SECONDS: '300',
          },
          () =>
            module === 'outbox-relay'
              ? import('../../lambdas/exactly-once/wiring/relay-handler')
              : import('../../lambdas/exactly-once/wiring/sweeper-handler'),
        );

        await expect(loading).rejects.toThrow(error);
      }
    },
  );

  test('without CONSUMER_ROUTES the function does not load', async () => {
    delete process.env.CONSUMER_ROUTES;

    const loading = loadWithMockedSdk(
      { OUTBOX_TABLE_NAME: ORDERS_TABLE, OUTBOX_ENTITY_PARTITION_PREFIX: 'ORDER#' },
      () => import('../../lambdas/exactly-once/wiring/relay-handler'),
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
    entries: ({ event: OrderEvent; createdAt: string } | { item: Record<string, unknown> })[],
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
      { event: placed('ord-young'), createdAt: ago(60) },
      { event: cancelled('ord-old'), createdAt: ago(400) },
      { event: placed('ord-oldest'), createdAt: ago(1_200) },
      { event: placed('ord-edge'), createdAt: ago(SWEEP_AGE_SECONDS - 5) },
    ]);

    const result = await sweep();

    expect(sentEventIds(sweeper, FIFO_URL)).toEqual(['ord-oldest.placed', 'ord-old.cancelled']);
    expect(sentEventIds(sweeper, STANDARD_URL)).toEqual(['ord-oldest.placed']);
    expect(batchSends(sweeper, FIFO_URL).flat()[0]).toMatchObject({
      MessageGroupId: 'ord-oldest',
      MessageDeduplicationId: 'ord-oldest.placed',
    });
    expect(markedEventIds(sweeper).sort()).toEqual(['ord-old.cancelled', 'ord-oldest.placed']);
    expect(result).toMatchObject({ republished: 2, failed: 0 });
    expect(metric('OutboxEventsSwept')).toBe(2);
  });

  test('queries the pendingOutbox index only, every shard, with the cut-off at now - sweep age', async () => {
    fakePendingIndex([]);
    const before = Date.now();

    await sweep();

    const queries = sweeper.doc.commandCalls(sweeper.docSdk.QueryCommand).map((c) => c.args[0].input);
    expect(queries.every((q) => q.TableName === ORDERS_TABLE && q.IndexName === 'pendingOutbox')).toBe(true);
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
      { event: placed('ord-young'), createdAt: ago(90) },
      { event: placed('ord-old'), createdAt: ago(1_000) },
    ]);

    const result = await sweep();

    // ord-old was republished and marked; ord-young is the oldest left.
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
      { event: cancelled('ord-stuck'), createdAt: ago(2_000) },
      { event: cancelled('ord-ok'), createdAt: ago(1_000) },
    ]);
    sweeper.sqs
      .on(sweeper.sqsSdk.SendMessageBatchCommand)
      .callsFake(
        acceptEntries((_queue, entry) => entry.MessageAttributes?.eventId?.StringValue === 'ord-stuck.cancelled'),
      );

    await expect(sweep()).rejects.toThrow('1 outbox events could not be republished');

    expect(markedEventIds(sweeper)).toEqual(['ord-ok.cancelled']);
    expect(metric('OldestUndispatchedOutboxAgeSeconds')).toBeGreaterThanOrEqual(2_000);
    expect(metric('OldestUndispatchedOutboxAgeSeconds')).toBeLessThan(2_010);
  });
  describe('a malformed pending item is logged, counted and set aside; the sweep goes on', () => {
    /** A stored outbox item whose event is broken by `breakIt`, pending in the shard its event id maps to. */
    function malformedItem(breakIt: (event: Record<string, unknown>) => unknown, orderId = 'ord-bad') {
      const good = outboxItem(placed(orderId), ago(1_500));
      return { item: { ...good, event: breakIt({ ...(good.event as Record<string, unknown>) }) } };
    }
    const malformedMetricCalls = () =>
      jest.mocked(sweeper.metrics.addMetric).mock.calls.filter((c) => c[0] === 'MalformedOutboxItem');

    test('[valid, malformed, valid]: both valid ones published and marked, the metric once (1), no throw', async () => {
      const pending = fakePendingIndex([
        { event: placed('ord-first'), createdAt: ago(2_000) },
        malformedItem((event) => ({ ...event, payload: { ...(event.payload as object), customerId: 'cust-\uFFFE' } })),
        { event: cancelled('ord-last'), createdAt: ago(1_000) },
      ]);

      const result = await sweep();

      expect(sentEventIds(sweeper, FIFO_URL)).toEqual(['ord-first.placed', 'ord-last.cancelled']);
      expect(markedEventIds(sweeper).sort()).toEqual(['ord-first.placed', 'ord-last.cancelled']);
      expect(malformedMetricCalls()).toEqual([['MalformedOutboxItem', 'Count', 1]]);
      expect(result).toMatchObject({ republished: 2, failed: 0 });
      expect(result.malformed).toEqual([
        {
          itemKey: 'ORDER#ord-bad/OUTBOX#ord-bad.placed',
          createdAt: expect.any(String),
          reason: expect.stringMatching(/U\+FFFE/),
          setAside: true,
        },
      ]);
      // Set aside, not dropped: still undispatched and in the index, in the set-aside partition.
      expect(pending.map((p) => [p.sk, p.pendingShard, p.dispatchedAt])).toEqual([
        ['OUTBOX#ord-bad.placed', 'malformed', undefined],
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
        'a sku holding U+FFFF',
        (event: Record<string, unknown>) => ({
          ...event,
          payload: { ...(event.payload as object), items: [{ sku: 'sku-\uFFFF', quantity: 1, unitPriceCents: 1 }] },
        }),
      ],
      [
        'an entityId that cannot be a FIFO group id',
        (event: Record<string, unknown>) => ({ ...event, entityId: 'ord bad' }),
      ],
    ])('%s: skipped and counted, the valid item still published', async (_name, breakIt) => {
      fakePendingIndex([malformedItem(breakIt), { event: placed('ord-ok'), createdAt: ago(1_000) }]);

      const result = await sweep();

      expect(sentEventIds(sweeper, FIFO_URL)).toEqual(['ord-ok.placed']);
      expect(malformedMetricCalls()).toEqual([['MalformedOutboxItem', 'Count', 1]]);
      expect(result.malformed).toHaveLength(1);
    });

    test('an event written before identifiers were restricted (a space in its ids) is deliverable, so it is published', async () => {
      const event = placed('ord-legacy');
      const legacy = {
        ...event,
        payload: { ...event.payload, customerId: 'cust 1', items: [{ sku: 'sku 1', quantity: 1, unitPriceCents: 1 }] },
      };
      fakePendingIndex([{ event: legacy, createdAt: ago(1_000) }]);

      const result = await sweep();

      expect(sentEventIds(sweeper, FIFO_URL)).toEqual(['ord-legacy.placed']);
      expect(result.malformed).toEqual([]);
    });

    test('a sweep with nothing malformed publishes the metric as 0, so its alarm always has data', async () => {
      fakePendingIndex([{ event: placed('ord-ok'), createdAt: ago(1_000) }]);

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
        const { item } = malformedItem(() => undefined, `ord-bad${String(i).padStart(3, '0')}`);
        return { item: { ...item, createdAt: ago(5_000 - i) } };
      });
      const pending = fakePendingIndex([...bad, { event: placed('ord-newer'), createdAt: ago(1_000) }]);

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
      expect(sentEventIds(sweeper, FIFO_URL)).toEqual(['ord-newer.placed']);
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
      const broken = malformedItem((event) => ({ ...event, version: 0 }), 'ord-fixme');
      const pending = fakePendingIndex([broken]);

      const first = await sweep();
      const second = await sweep();
      // An operator repairs the event in place (runbook, "Malformed outbox item"), leaving the rest as it is.
      pending[0].event = placed('ord-fixme');
      const third = await sweep();
      const fourth = await sweep();

      expect([first.malformed, second.malformed].map((m) => m.map((i) => i.itemKey))).toEqual([
        ['ORDER#ord-fixme/OUTBOX#ord-fixme.placed'],
        ['ORDER#ord-fixme/OUTBOX#ord-fixme.placed'],
      ]);
      expect(malformedMetricCalls().map((c) => c[2])).toEqual([1, 1, 0, 0]);
      expect(third).toMatchObject({ republished: 1, failed: 0, malformed: [], oldestPendingAgeSeconds: 0 });
      expect(sentEventIds(sweeper, FIFO_URL)).toEqual(['ord-fixme.placed']);
      expect(markedEventIds(sweeper)).toEqual(['ord-fixme.placed']);
      expect(pending).toEqual([]); // dispatched: out of the index
      expect(fourth).toMatchObject({ republished: 0, malformed: [] });
    });

    test('an item that fails to publish is not set aside: it stays in its shard and the next sweep retries it', async () => {
      const stuck = cancelled('ord-stuck');
      const pending = fakePendingIndex([{ event: stuck, createdAt: ago(2_000) }]);
      sweeper.sqs
        .on(sweeper.sqsSdk.SendMessageBatchCommand)
        .rejectsOnce(new Error('throttled'))
        .callsFake(acceptEntries());

      await expect(sweep()).rejects.toThrow('1 outbox events could not be republished');
      expect(setAsideKeys(sweeper)).toEqual([]);
      expect(pending.map((p) => p.pendingShard)).toEqual([pendingShardOf(stuck.eventId)]);

      await expect(sweep()).resolves.toMatchObject({ republished: 1, failed: 0 });
      expect(markedEventIds(sweeper)).toEqual(['ord-stuck.cancelled']);
    });

    test('setting an item aside failing is reported (the next sweep tries again), and the sweep goes on', async () => {
      const pending = fakePendingIndex(
        [malformedItem(() => undefined), { event: placed('ord-ok'), createdAt: ago(1_000) }],
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
  const item = (id: string): Key => ({ pk: `ORDER#${id}`, sk: `OUTBOX#${id}` });
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
    return { store: new DynamoDbOutboxStore(client, 'outbox', ORDER_PK_PREFIX), batchGets };
  }

  test('a dispatched or vanished item is dropped, and unprocessed keys are asked again', async () => {
    const { store, batchGets } = storeWith((keys, call) =>
      call === 1
        ? { items: [base('a'), { ...item('b'), dispatchedAt: 'x' }], unprocessed: [item('c')] } // d: gone
        : { items: keys.map((k) => ({ ...k, pendingShard: '0' })) },
    );

    const pending = await store.pendingOlderThan(new Date('2031-01-01T00:00:00Z'), 10);

    expect(pending.map((p) => p.itemKey)).toEqual(['ORDER#a/OUTBOX#a', 'ORDER#c/OUTBOX#c']);
    expect(batchGets).toEqual([listed.map(({ pk, sk }) => ({ pk, sk })), [item('c')]]);
  });

  test('an item the base table shows in another partition (set aside since the index listed it) is dropped', async () => {
    const { store } = storeWith(() => ({
      items: [base('a'), { ...item('b'), pendingShard: 'malformed' }, { ...item('c'), pendingShard: '3' }, base('d')],
    }));

    const pending = await store.pendingOlderThan(new Date('2031-01-01T00:00:00Z'), 10);

    expect(pending.map((p) => p.itemKey)).toEqual(['ORDER#a/OUTBOX#a', 'ORDER#d/OUTBOX#d']);
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
    const events = Array.from({ length: 500 }, (_, i) => ({ eventId: `evt-${i}` }) as OrderEvent);
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
      itemKey: `ORDER#o${i}/OUTBOX#e${i}`,
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
