import { DeleteItemCommand, PutItemCommand, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { outboxPut } from '@exactly-once/runtime/aws';
import { apiEvent, lambdaContext } from '../support/api-events';
import {
  createTemplateTables,
  scanAll,
  testDynamoDbClient,
  useEmulatorEnvironment,
} from '../support/emulated-dynamodb';
import type { HttpResult } from '../support/handlers';
import { thingHappened } from '../exactly-once/fixtures/probe-events';
import { probeStackTemplate } from '../exactly-once/fixtures/probe-stack';
import { THING_PK_PREFIX, thingIdOf as derivedThingId } from '../exactly-once/fixtures/probe-stack-things';

/**
 * The transactional outbox (`transactional-outbox`) on DynamoDB Local, through the probe stack's
 * producer (POST /things: the mechanism's idempotent command, the thing and its ThingHappened outbox
 * item written with `outboxPut` in one transaction) and through `outboxPut` itself: the change and its
 * event commit together or not at all, and an event already in the outbox is never written twice.
 */
type Handler = (typeof import('../exactly-once/fixtures/probe-stack-producer'))['handler'];
type TableName = 'Things' | 'Idempotency';

let handler: Handler;
let tables: Awaited<ReturnType<typeof createTemplateTables<TableName>>>;
/** Every write the producer sent, by command, as the SDK middleware saw it. */
let writes: { command: string; items?: number }[] = [];
let callers = 0;

beforeAll(async () => {
  useEmulatorEnvironment();
  tables = await createTemplateTables<TableName>(probeStackTemplate(), (logicalId) =>
    logicalId.startsWith('Things') ? 'Things' : logicalId.startsWith('StorageIdempotency') ? 'Idempotency' : undefined,
  );
  Object.assign(process.env, {
    THINGS_TABLE_NAME: tables.names.Things,
    IDEMPOTENCY_TABLE_NAME: tables.names.Idempotency,
    IDEMPOTENCY_KEY_EXPIRY_SECONDS: '86400',
    HUMAN_ROLE_PATTERNS: 'AWSReservedSSO_*',
  });
  const clients = await import('@exactly-once/runtime/aws/clients');
  clients.dynamoDbClient().middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { TableName?: string; TransactItems?: unknown[] };
      if (input.TransactItems !== undefined || input.TableName === tables.names.Things) {
        writes.push({ command: context.commandName ?? 'unknown', items: input.TransactItems?.length });
      }
      return next(args);
    },
    { step: 'initialize', name: 'recordThingWrites' },
  );
  ({ handler } = await import('../exactly-once/fixtures/probe-stack-producer'));
}, 120_000);

afterAll(async () => {
  await tables?.drop();
});

beforeEach(() => {
  writes = [];
});

/** A caller of its own per test: things are derived from (caller, key), so tests never share one. */
function newCaller(): string {
  callers += 1;
  return `arn:aws:iam::123456789012:user/outbox-${callers}-${Date.now()}`;
}

function postThing(caller: string, key: string, amount = 3): Promise<HttpResult> {
  return handler(
    apiEvent({
      method: 'POST',
      path: '/things',
      caller,
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': `"${key}"` },
      body: JSON.stringify({ ownerId: 'owner-1', amount }),
    }),
    lambdaContext(),
  ) as Promise<HttpResult>;
}

async function partition(thingId: string): Promise<Record<string, unknown>[]> {
  return (await scanAll(tables.names.Things)).filter((item) => item.pk === `${THING_PK_PREFIX}${thingId}`);
}

const thingIdOf = (response: HttpResult) => (JSON.parse(response.body) as { thingId: string }).thingId;

test("one POST /things writes the thing and its ThingHappened outbox item in one TransactWriteItems, in the thing's partition", async () => {
  const response = await postThing(newCaller(), 'one-transaction');

  expect(response.statusCode).toBe(201);
  const thingId = thingIdOf(response);
  expect(writes).toEqual([{ command: 'TransactWriteItemsCommand', items: 2 }]);
  const items = await partition(thingId);
  expect(items.map((item) => item.sk).sort()).toEqual([`OUTBOX#${thingId}.happened`, 'THING']);
  const outboxItem = items.find((item) => item.entity === 'OUTBOX')!;
  expect(outboxItem).toMatchObject({
    eventId: `${thingId}.happened`,
    type: 'ThingHappened',
    entityId: thingId,
    event: expect.objectContaining({
      eventId: `${thingId}.happened`,
      version: 1,
      payload: { amount: 3, ownerId: 'owner-1' },
    }),
  });
  // Pending until the relay publishes it: the sweeper's index finds it by these.
  expect(outboxItem.pendingShard).toEqual(expect.any(String));
  expect(outboxItem.createdAt).toBe((outboxItem.event as { occurredAt: string }).occurredAt);
});

test('if the outbox item cannot be written, neither is the thing (one transaction)', async () => {
  const caller = newCaller();
  // The producer derives the thing from (caller, key); a leftover item under the event's outbox key
  // makes the outbox put's condition fail.
  const thingId = derivedThingId(caller, 'blocked');
  const client = testDynamoDbClient();
  await client.send(
    new PutItemCommand({
      TableName: tables.names.Things,
      Item: marshall({ pk: `${THING_PK_PREFIX}${thingId}`, sk: `OUTBOX#${thingId}.happened`, type: 'Blocker' }),
    }),
  );
  client.destroy();

  const response = await postThing(caller, 'blocked');

  // A condition no retry can change is a 500 without Retry-After, never a 201 for an unwritten thing.
  expect(response.statusCode).toBe(500);
  expect(response.headers['Retry-After']).toBeUndefined();
  expect((await partition(thingId)).map((item) => item.sk)).toEqual([`OUTBOX#${thingId}.happened`]);
});

test('a second write of an event already in the outbox is refused, and the change written with it is not applied', async () => {
  const documents = DynamoDBDocumentClient.from(testDynamoDbClient());
  const event = thingHappened(`direct-${Date.now()}`);
  const change = (amount: number) => ({
    Put: { TableName: tables.names.Things, Item: { pk: `${THING_PK_PREFIX}${event.entityId}`, sk: 'THING', amount } },
  });
  await documents.send(
    new TransactWriteCommand({ TransactItems: [change(1), outboxPut(tables.names.Things, event, THING_PK_PREFIX)] }),
  );

  // The same event again, beside an unconditional change of its entity: only the outbox put can refuse it.
  const second = documents.send(
    new TransactWriteCommand({ TransactItems: [change(2), outboxPut(tables.names.Things, event, THING_PK_PREFIX)] }),
  );

  await expect(second).rejects.toBeInstanceOf(TransactionCanceledException);
  await expect(second).rejects.toMatchObject({
    CancellationReasons: [{ Code: 'None' }, { Code: 'ConditionalCheckFailed' }],
  });
  const items = await partition(event.entityId);
  expect(items.filter((item) => item.entity === 'OUTBOX')).toHaveLength(1);
  expect(items.find((item) => item.sk === 'THING')).toMatchObject({ amount: 1 });
  documents.destroy();
});

test('the same request after its idempotency record is lost derives the same thing and event: still one thing, one outbox item', async () => {
  const caller = newCaller();
  const first = await postThing(caller, 'record-lost');
  const client = testDynamoDbClient();
  for (const item of await scanAll(tables.names.Idempotency)) {
    await client.send(new DeleteItemCommand({ TableName: tables.names.Idempotency, Key: marshall({ id: item.id }) }));
  }
  client.destroy();
  writes = [];

  const retry = await postThing(caller, 'record-lost');

  expect(first.statusCode).toBe(201);
  // Not a replay: the command ran again, and its transaction was refused by the items already there.
  expect(retry.statusCode).toBe(201);
  expect(retry.headers['Idempotent-Replayed']).toBeUndefined();
  expect(writes).toEqual([{ command: 'TransactWriteItemsCommand', items: 2 }]);
  expect(thingIdOf(retry)).toBe(thingIdOf(first));
  const items = await partition(thingIdOf(first));
  expect(items.map((item) => item.sk).sort()).toEqual([`OUTBOX#${thingIdOf(first)}.happened`, 'THING']);
});
