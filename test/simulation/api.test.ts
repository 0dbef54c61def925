import '../../tools/simulation/world/environment';
import { DynamoDbOrderRepository } from '../../lambdas/shop/aws/dynamodb-order-repository';
import { idempotencyStore } from '../../lambdas/exactly-once/aws/idempotency-store';
import { makeCreateOrderHandler } from '../../lambdas/shop/entry-points/create-order';
import { cancelOrder } from '../../lambdas/shop/use-cases/cancel-order';
import { lambdaContext, VALID_ORDER } from '../support/api-events';
import { lowLevelClient } from '../../tools/simulation/low-level-client';
import { IDEMPOTENCY_KEY_EXPIRY_SECONDS } from '../../tooling/shop/simulation/api';
import { EPOCH_MS } from '../../tools/simulation/world/scheduler';
import { ORDERS_TABLE } from '../../tooling/shop/simulation/api';
import { IDEMPOTENCY_TABLE } from '../../tools/simulation/world/tables';
import { memoryTableStore } from './contracts/memory-tables';
import { simulationOptions, World } from '../../tooling/shop/simulation/world';
import { idempotentPostEvent } from '../../tools/simulation/world/world';

/**
 * POST /orders as the simulation runs it: the deployed create-order handler,
 * Powertools' idempotency layer and its DynamoDB persistence layer, on the
 * in-memory DynamoDB, with Powertools' clock (Date.now) moved by the test.
 */
const ALICE = 'arn:aws:sts::111122223333:assumed-role/alice/session-1';
const TIMEOUT_MS = 10_000;

let now: number;
beforeEach(() => {
  now = EPOCH_MS;
  jest.spyOn(Date, 'now').mockImplementation(() => now);
});
afterEach(() => jest.restoreAllMocks());

function api() {
  const { db } = memoryTableStore();
  const handler = makeCreateOrderHandler({
    orders: new DynamoDbOrderRepository(db.asDocumentClient(), ORDERS_TABLE),
    idempotencyStore: idempotencyStore(
      IDEMPOTENCY_TABLE,
      lowLevelClient((command) => db.send(command)),
    ),
    keyExpirySeconds: IDEMPOTENCY_KEY_EXPIRY_SECONDS,
    now: () => new Date(now),
  });
  const post = (key: string, body = VALID_ORDER) =>
    handler(
      idempotentPostEvent(ALICE, key, '/orders', body),
      lambdaContext(TIMEOUT_MS, { clock: () => now, requestId: key }),
    );
  const orders = () => db.items(ORDERS_TABLE).filter((i) => i.entity === 'ORDER');
  return { db, post, orders };
}

test('two requests with one key at once: one places the order, the other gets 409; a retry later replays the same answer', async () => {
  const { post, orders } = api();

  const [first, second] = await Promise.all([post('k-1'), post('k-1')]);
  const retry = await post('k-1');

  expect([first.statusCode, second.statusCode]).toEqual([201, 409]);
  expect(second.headers['Retry-After']).toBe('1');
  expect(retry).toMatchObject({ statusCode: 201, body: first.body, headers: { 'Idempotent-Replayed': 'true' } });
  expect(orders()).toHaveLength(1);
});

test('the order written but the completion lost: 409 until the in-progress record expires on the clock, then the retry answers with that order', async () => {
  const { db, post, orders } = api();
  let loseCompletion = true;
  db.beforeWrite = (table, operation) => {
    if (table === IDEMPOTENCY_TABLE && operation === 'Update' && loseCompletion) {
      loseCompletion = false;
      throw new Error('the process died before its completion landed');
    }
  };

  const crashed = await post('k-1');
  const placed = orders();
  now += TIMEOUT_MS - 1;
  const beforeExpiry = await post('k-1');
  now += 2;
  const afterExpiry = await post('k-1');
  const replay = await post('k-1');

  expect(crashed.statusCode).toBe(500);
  expect(placed).toHaveLength(1);
  expect(beforeExpiry.statusCode).toBe(409);
  expect(afterExpiry.statusCode).toBe(201);
  expect(afterExpiry.headers['Idempotent-Replayed']).toBeUndefined();
  expect(JSON.parse(afterExpiry.body).orderId).toBe(placed[0].orderId);
  expect(replay).toMatchObject({ statusCode: 201, body: afterExpiry.body, headers: { 'Idempotent-Replayed': 'true' } });
  expect(orders()).toHaveLength(1);
});

test('a replay after the order was cancelled answers with the first answer, not the cancelled order', async () => {
  const { db, post } = api();
  const first = await post('k-1');
  const orderId = JSON.parse(first.body).orderId as string;
  now += 60_000;
  const caller = 'arn:aws:sts::111122223333:assumed-role/alice';
  await cancelOrder(new DynamoDbOrderRepository(db.asDocumentClient(), ORDERS_TABLE), {
    caller,
    orderId,
    now: new Date(now),
  });

  const replay = await post('k-1');

  expect(replay).toMatchObject({ statusCode: 201, body: first.body, headers: { 'Idempotent-Replayed': 'true' } });
});

test('the key sent again with another body: 422 while in progress, once completed and once the record expired; the order untouched', async () => {
  const { db, post, orders } = api();
  const other = { ...VALID_ORDER, customerId: 'cust-other' };
  const [first, inFlight] = await Promise.all([post('k-1'), post('k-1', other)]);
  const order = orders();
  const record = db.items(IDEMPOTENCY_TABLE);

  const completed = await post('k-1', other);
  const recordAfterCompleted = db.items(IDEMPOTENCY_TABLE);
  now += (IDEMPOTENCY_KEY_EXPIRY_SECONDS + 1) * 1000;
  const expired = await post('k-1', other);

  expect(first.statusCode).toBe(201);
  expect([inFlight.statusCode, completed.statusCode, expired.statusCode]).toEqual([422, 422, 422]);
  expect(recordAfterCompleted).toEqual(record);
  // Past its expiry the record is taken over by the other body's request, which fails and deletes it.
  expect(db.items(IDEMPOTENCY_TABLE)).toEqual([]);
  expect(orders()).toEqual(order);
});

test("a simulated run's idempotency records are stamped on the virtual clock, not the host's", async () => {
  jest.restoreAllMocks();
  const world = new World(simulationOptions({ seed: 1, orders: 40 }));

  const result = await world.run();

  const expiries = world.db.items(IDEMPOTENCY_TABLE).map((r) => Number(r.expiration) - IDEMPOTENCY_KEY_EXPIRY_SECONDS);
  expect(expiries.length).toBeGreaterThan(0);
  for (const stampedAt of expiries) {
    expect(stampedAt).toBeGreaterThanOrEqual(Math.floor(EPOCH_MS / 1000));
    expect(stampedAt).toBeLessThanOrEqual(Math.ceil(EPOCH_MS / 1000 + result.virtualSeconds));
  }
  expect(Date.now()).toBeGreaterThan(EPOCH_MS + result.virtualSeconds * 1000); // the host's clock is back
});
