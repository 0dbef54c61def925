import '@exactly-once/tools/simulation/world/quiet-powertools';
import { idempotencyStore } from '@exactly-once/runtime/aws/idempotency-store';
import { lambdaContext } from '@exactly-once/runtime/testing';
import { lowLevelClient } from '@exactly-once/tools/simulation/low-level-client';
import { MemoryDynamoDb } from '@exactly-once/tools/simulation/memory-dynamodb';
import { EPOCH_MS } from '@exactly-once/tools/simulation/world/scheduler';
import { createSimulatedTables, IDEMPOTENCY_TABLE } from '@exactly-once/tools/simulation/world/tables';
import { idempotentPostEvent } from '@exactly-once/tools/simulation/world/world';
import {
  makeCreateThingHandler,
  THING_KEY_EXPIRY_SECONDS,
  THINGS_TABLE,
  undoThing,
} from '../exactly-once/fixtures/probe-simulation';
import { probeSimulationOptions, ProbeWorld } from './probe-world';

/**
 * An idempotent POST as the simulation runs it: the mechanism's `idempotentCommand` (here the probe
 * domain's POST /things), Powertools' idempotency layer and its DynamoDB persistence layer, on the
 * in-memory DynamoDB, with Powertools' clock (Date.now) moved by the test.
 */
const ALICE = 'arn:aws:sts::111122223333:assumed-role/alice/session-1';
const TIMEOUT_MS = 10_000;
const A_THING = { amount: 7 };

let now: number;
beforeEach(() => {
  now = EPOCH_MS;
  jest.spyOn(Date, 'now').mockImplementation(() => now);
});
afterEach(() => jest.restoreAllMocks());

function api() {
  const db = new MemoryDynamoDb();
  createSimulatedTables(db, THINGS_TABLE);
  const handler = makeCreateThingHandler({
    documents: db.asDocumentClient(),
    idempotencyStore: idempotencyStore(
      IDEMPOTENCY_TABLE,
      lowLevelClient((command) => db.send(command)),
    ),
    now: () => new Date(now),
  });
  const post = (key: string, body: Record<string, unknown> = A_THING) =>
    handler(
      idempotentPostEvent(ALICE, key, '/things', body),
      lambdaContext(TIMEOUT_MS, { clock: () => now, requestId: key }),
    );
  const things = () => db.items(THINGS_TABLE).filter((i) => i.entity === 'THING');
  return { db, post, things };
}

test('two requests with one key at once: one makes the entity, the other gets 409; a retry later replays the same answer', async () => {
  const { post, things } = api();

  const [first, second] = await Promise.all([post('k-1'), post('k-1')]);
  const retry = await post('k-1');

  expect([first.statusCode, second.statusCode]).toEqual([201, 409]);
  expect(second.headers['Retry-After']).toBe('1');
  expect(retry).toMatchObject({ statusCode: 201, body: first.body, headers: { 'Idempotent-Replayed': 'true' } });
  expect(things()).toHaveLength(1);
});

test('the entity written but the completion lost: 409 until the in-progress record expires on the clock, then the retry answers with that entity', async () => {
  const { db, post, things } = api();
  let loseCompletion = true;
  db.beforeWrite = (table, operation) => {
    if (table === IDEMPOTENCY_TABLE && operation === 'Update' && loseCompletion) {
      loseCompletion = false;
      throw new Error('the process died before its completion landed');
    }
  };

  const crashed = await post('k-1');
  const made = things();
  now += TIMEOUT_MS - 1;
  const beforeExpiry = await post('k-1');
  now += 2;
  const afterExpiry = await post('k-1');
  const replay = await post('k-1');

  expect(crashed.statusCode).toBe(500);
  expect(made).toHaveLength(1);
  expect(beforeExpiry.statusCode).toBe(409);
  expect(afterExpiry.statusCode).toBe(201);
  expect(afterExpiry.headers['Idempotent-Replayed']).toBeUndefined();
  expect(JSON.parse(afterExpiry.body).thingId).toBe(made[0].thingId);
  expect(replay).toMatchObject({ statusCode: 201, body: afterExpiry.body, headers: { 'Idempotent-Replayed': 'true' } });
  expect(things()).toHaveLength(1);
});

test('a replay after the entity was changed answers with the first answer, not the entity as it is now', async () => {
  const { db, post, things } = api();
  const first = await post('k-1');
  now += 60_000;
  await undoThing(db.asDocumentClient(), JSON.parse(first.body).thingId as string, new Date(now));

  const replay = await post('k-1');

  expect(things()[0].status).toBe('UNDONE');
  expect(replay).toMatchObject({ statusCode: 201, body: first.body, headers: { 'Idempotent-Replayed': 'true' } });
});

test('the key sent again with another body: 422 while in progress, once completed and once the record expired; the entity untouched', async () => {
  const { db, post, things } = api();
  const other = { amount: A_THING.amount + 1 };
  const [first, inFlight] = await Promise.all([post('k-1'), post('k-1', other)]);
  const thing = things();
  const record = db.items(IDEMPOTENCY_TABLE);

  const completed = await post('k-1', other);
  const recordAfterCompleted = db.items(IDEMPOTENCY_TABLE);
  now += (THING_KEY_EXPIRY_SECONDS + 1) * 1000;
  const expired = await post('k-1', other);

  expect(first.statusCode).toBe(201);
  expect([inFlight.statusCode, completed.statusCode, expired.statusCode]).toEqual([422, 422, 422]);
  expect(recordAfterCompleted).toEqual(record);
  // Past its expiry the record is taken over by the other body's request, which fails and deletes it.
  expect(db.items(IDEMPOTENCY_TABLE)).toEqual([]);
  expect(things()).toEqual(thing);
});

test("a simulated run's idempotency records are stamped on the virtual clock, not the host's", async () => {
  jest.restoreAllMocks();
  const world = new ProbeWorld(probeSimulationOptions({ seed: 1, intents: 40 }));

  const result = await world.run();

  const expiries = world.db.items(IDEMPOTENCY_TABLE).map((r) => Number(r.expiration) - THING_KEY_EXPIRY_SECONDS);
  expect(expiries.length).toBeGreaterThan(0);
  for (const stampedAt of expiries) {
    expect(stampedAt).toBeGreaterThanOrEqual(Math.floor(EPOCH_MS / 1000));
    expect(stampedAt).toBeLessThanOrEqual(Math.ceil(EPOCH_MS / 1000 + result.virtualSeconds));
  }
  expect(Date.now()).toBeGreaterThan(EPOCH_MS + result.virtualSeconds * 1000); // the host's clock is back
});
