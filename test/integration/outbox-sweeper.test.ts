import { BatchWriteCommand, GetCommand, DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import { outboxSk, pendingShardOf } from '@exactly-once/runtime/aws/outbox-table';
import { lambdaContext } from '@exactly-once/runtime/testing';
import { thingHappened, type ThingHappened } from '../exactly-once/fixtures/probe-events';
import { PROBE_FIFO_SPEC, PROBE_SPEC } from '../exactly-once/fixtures/probe-spec';
import { recordThing, THING_PK_PREFIX } from '../exactly-once/fixtures/probe-things';
import { testDynamoDbClient, useEmulatorEnvironment, type EmulatedTables } from '../support/emulated-dynamodb';
import { receiveMatching } from '../support/emulated-messaging';
import {
  createEmulatedQueues,
  createEmulatedTables,
  type EmulatedQueues,
  type EmulatedTableName,
} from '../support/emulated-stack';

/**
 * The sweeper (the safety net behind the stream) on DynamoDB Local and fauxqs,
 * with the tables and queues of the mechanism's construct: outbox items are written
 * with their thing in one transaction (the neutral fixture's producer), backdated,
 * and the stream is never relayed, as when the relay gave up on them. Its own tables
 * and queues: nothing else publishes here. ThingHappened routes to both probe
 * consumers: the FIFO one's queue and the standard one's.
 */
const SWEEP_AGE_SECONDS = 300;

type SweepResult = {
  republished: number;
  failed: number;
  malformed: { itemKey: string; setAside: boolean }[];
  oldestPendingAgeSeconds: number;
};
let limits: { maxItems: number; maxSetAside: number };
let sweep: () => Promise<SweepResult>;
let tables: EmulatedTables<EmulatedTableName>;
let queues: EmulatedQueues;
let documents: DynamoDBDocumentClient;

beforeAll(async () => {
  useEmulatorEnvironment();
  tables = await createEmulatedTables();
  queues = await createEmulatedQueues();
  documents = DynamoDBDocumentClient.from(testDynamoDbClient());
  Object.assign(process.env, {
    OUTBOX_TABLE_NAME: tables.names.Things,
    OUTBOX_ENTITY_PARTITION_PREFIX: THING_PK_PREFIX,
    OUTBOX_DISPATCHED_RETENTION_SECONDS: '604800',
    CONSUMER_ROUTES: JSON.stringify(queues.routes),
    OUTBOX_SWEEP_AGE_SECONDS: String(SWEEP_AGE_SECONDS),
  });
  await jest.isolateModulesAsync(async () => {
    const { handler } = await import('@exactly-once/runtime/wiring/handlers/sweeper-handler');
    const { SWEEP_MAX_ITEMS, SWEEP_MAX_SET_ASIDE } =
      await import('@exactly-once/runtime/wiring/entry-points/sweeper-handler');
    sweep = () => handler({}, lambdaContext() as Context) as Promise<SweepResult>;
    limits = { maxItems: SWEEP_MAX_ITEMS, maxSetAside: SWEEP_MAX_SET_ASIDE };
  });
}, 180_000);

afterAll(async () => {
  documents?.destroy();
  await tables?.drop();
});

let seq = 0;
/** Records a thing and its ThingHappened (one transaction, as a producer does), the event `ageSeconds` old. */
async function recordThingAged(ageSeconds: number): Promise<ThingHappened> {
  seq += 1;
  const entityId = `thing-sweep${String(seq).padStart(3, '0')}-${Date.now().toString(36)}`;
  const event = thingHappened(entityId, { occurredAt: new Date(Date.now() - ageSeconds * 1000).toISOString() });
  await recordThing(documents, tables.names.Things, event);
  return event;
}

const thingPk = (entityId: string) => `${THING_PK_PREFIX}${entityId}`;

async function outboxItem(event: ThingHappened): Promise<Record<string, unknown> | undefined> {
  const { Item } = await documents.send(
    new GetCommand({
      TableName: tables.names.Things,
      Key: { pk: thingPk(event.entityId), sk: outboxSk(event.eventId) },
      ConsistentRead: true,
    }),
  );
  return Item;
}

/** Everything published for an event, on both queues (waits a little to see a second copy, if any). */
async function published(event: ThingHappened): Promise<{ fifo: number; standard: number }> {
  const [fifo, standard] = await Promise.all([
    receiveMatching(queues.consumers[PROBE_FIFO_SPEC.name].queueUrl, 2, event.eventId, 2_000),
    receiveMatching(queues.consumers[PROBE_SPEC.name].queueUrl, 2, event.eventId, 2_000),
  ]);
  return { fifo: fifo.Records.length, standard: standard.Records.length };
}

test('an outbox item the stream never relayed, older than the sweep age, is published once and marked dispatched; the next sweep publishes nothing', async () => {
  const stranded = await recordThingAged(SWEEP_AGE_SECONDS + 300);
  const young = await recordThingAged(60); // pending, but the stream may still relay it: not the sweeper's yet

  const first = await sweep();
  const second = await sweep();

  expect(first).toMatchObject({ republished: 1, failed: 0 });
  expect(second).toMatchObject({ republished: 0, failed: 0 });
  expect(await published(stranded)).toEqual({ fifo: 1, standard: 1 });
  expect(await published(young)).toEqual({ fifo: 0, standard: 0 });
  const marked = await outboxItem(stranded);
  expect(marked?.dispatchedAt).toEqual(expect.any(String));
  expect(marked?.pendingShard).toBeUndefined(); // out of the pending index
  expect((await outboxItem(young))?.pendingShard).toBeDefined();
  // The oldest pending item is now the young one (about 60 s old), not the one just swept.
  expect(second.oldestPendingAgeSeconds).toBeGreaterThanOrEqual(60);
  expect(second.oldestPendingAgeSeconds).toBeLessThan(SWEEP_AGE_SECONDS);

  // Leave nothing pending for the next test's oldest-pending figure.
  await documents.send(
    new UpdateCommand({
      TableName: tables.names.Things,
      Key: { pk: thingPk(young.entityId), sk: outboxSk(young.eventId) },
      UpdateExpression: 'SET dispatchedAt = :at REMOVE pendingShard',
      ExpressionAttributeValues: { ':at': new Date().toISOString() },
    }),
  );
});

/*
 * The pending index is a GSI: eventually consistent, it can still list an item
 * whose base item the relay has already marked dispatched. DynamoDB Local
 * updates its indexes synchronously, so the lag is reproduced by marking the
 * base item (dispatchedAt) without taking it out of the index (pendingShard
 * kept): what a lagging index shows. A sweeper that trusts the index alone
 * republishes it and reports it as the oldest pending item; one that re-reads
 * the base items (consistently) before publishing and before counting does not
 * (DynamoDbOutboxStore.stillPending).
 */
test('index lag: an item marked dispatched on its base item but still in the pending index is neither republished nor counted as oldest pending', async () => {
  const relayed = await recordThingAged(SWEEP_AGE_SECONDS + 300);
  await documents.send(
    new UpdateCommand({
      TableName: tables.names.Things,
      Key: { pk: thingPk(relayed.entityId), sk: outboxSk(relayed.eventId) },
      UpdateExpression: 'SET dispatchedAt = :at',
      ExpressionAttributeValues: { ':at': new Date().toISOString() },
    }),
  );

  const result = await sweep();

  expect(await published(relayed)).toEqual({ fifo: 0, standard: 0 });
  expect(result).toMatchObject({ republished: 0, failed: 0, oldestPendingAgeSeconds: 0 });
});

/** Writes (`put`) or deletes outbox items straight into the Things table, 25 a call (BatchWriteItem's limit). */
async function batchWrite(requests: Record<string, unknown>[]): Promise<void> {
  for (let i = 0; i < requests.length; i += 25) {
    let pending: Record<string, unknown>[] | undefined = requests.slice(i, i + 25);
    while (pending !== undefined && pending.length > 0) {
      const { UnprocessedItems } = await documents.send(
        new BatchWriteCommand({ RequestItems: { [tables.names.Things]: pending as never } }),
      );
      pending = UnprocessedItems?.[tables.names.Things] as Record<string, unknown>[] | undefined;
    }
  }
}

/*
 * The sweeper reads the SWEEP_MAX_ITEMS oldest pending items. Items it cannot
 * publish (written by a buggy writer or edited by hand: the API cannot write
 * one) that stayed pending would be those oldest items on every sweep, and
 * every newer event would wait behind them for good. They are set aside
 * instead: out of the pending shards, into the index's set-aside partition,
 * undispatched, reported on every sweep.
 */
test('more malformed items than a sweep reads, all older than a stranded event, do not hide it: set aside, then the event is published', async () => {
  const createdAt = (i: number) => new Date(Date.now() - (SWEEP_AGE_SECONDS + 3_600 - i) * 1000).toISOString();
  const malformed = Array.from({ length: limits.maxItems }, (_, i) => {
    const entityId = `thing-malformed${String(i).padStart(4, '0')}${Date.now().toString(36)}`;
    const eventId = `${entityId}:happened`;
    // No event at all: what a writer that lost it would leave.
    return {
      pk: thingPk(entityId),
      sk: outboxSk(eventId),
      entity: 'OUTBOX',
      eventId,
      createdAt: createdAt(i),
      pendingShard: pendingShardOf(eventId),
    };
  });
  await batchWrite(malformed.map((Item) => ({ PutRequest: { Item } })));
  const stranded = await recordThingAged(SWEEP_AGE_SECONDS + 300); // newer than every malformed item
  try {
    const first = await sweep();
    const second = await sweep();

    // The first sweep's read is all malformed items: each is set aside.
    expect(first).toMatchObject({ republished: 0, failed: 0 });
    expect(first.malformed).toHaveLength(limits.maxItems);
    expect(first.malformed.every((m) => m.setAside)).toBe(true);
    // The second reaches the stranded event.
    expect(second).toMatchObject({ republished: 1, failed: 0 });
    expect(await published(stranded)).toEqual({ fifo: 1, standard: 1 });
    expect((await outboxItem(stranded))?.dispatchedAt).toEqual(expect.any(String));
    // Set aside, not dropped: undispatched, in the index's set-aside partition, with the reason, reported again.
    const aside = await documents.send(
      new GetCommand({ TableName: tables.names.Things, Key: { pk: malformed[0].pk, sk: malformed[0].sk } }),
    );
    expect(aside.Item).toMatchObject({ pendingShard: 'malformed', malformedReason: 'The outbox item has no event.' });
    expect(aside.Item?.dispatchedAt).toBeUndefined();
    expect(second.malformed).toHaveLength(limits.maxSetAside);
    // Still the oldest undispatched items: the age alarm sees them.
    expect(second.oldestPendingAgeSeconds).toBeGreaterThan(SWEEP_AGE_SECONDS + 3_000);
  } finally {
    // Leave nothing pending for the other tests' oldest-pending figures.
    await batchWrite(malformed.map(({ pk, sk }) => ({ DeleteRequest: { Key: { pk, sk } } })));
  }
}, 300_000);
