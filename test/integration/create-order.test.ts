import type { Context } from 'aws-lambda';
import { apiEvent, lambdaContext, VALID_ORDER } from '../support/api-events';
import { useApiOnEmulators, type ApiHandler } from '../support/api-on-emulators';
import { scanAll } from '../support/dynamodb';
import { pollUntil } from '../support/poll';

/**
 * POST /orders against DynamoDB Local, tables created as the synthesized stack
 * declares them. Each test uses its own caller, so tests do not share keys.
 */
const api = useApiOnEmulators(['create-order'] as const);
const tables = {
  get names() {
    return api.tables();
  },
};
const handler: ApiHandler = (event, context) => api.handler('create-order')(event, context);

let callerSeq = 0;
function newCaller(): string {
  callerSeq += 1;
  return `arn:aws:iam::123456789012:user/caller-${callerSeq}-${Date.now()}`;
}

function post(caller: string, key: string | string[] | undefined, body: unknown, context: Context = lambdaContext()) {
  const headers: Record<string, string | string[]> = { 'Content-Type': 'application/json' };
  if (key !== undefined) headers['Idempotency-Key'] = key;
  const raw = typeof body === 'string' ? body : JSON.stringify(body);
  return handler(apiEvent({ method: 'POST', path: '/orders', caller, headers, body: raw }), context);
}

async function ordersOf(caller: string) {
  const items = await scanAll(tables.names.Orders);
  return items.filter((i) => i.entity === 'ORDER' && i.caller === caller);
}

async function idempotencyRecordCount(): Promise<number> {
  return (await scanAll(tables.names.Idempotency)).length;
}

test('the same key twice makes one order and replays the identical response with the replay header', async () => {
  const caller = newCaller();

  const first = await post(caller, '"key-1"', VALID_ORDER);
  const second = await post(caller, '"key-1"', VALID_ORDER);

  expect(first.statusCode).toBe(201);
  expect(second.statusCode).toBe(201);
  expect(second.body).toBe(first.body);
  expect(second.headers['Idempotent-Replayed']).toBe('true');
  expect(first.headers['Idempotent-Replayed']).toBeUndefined();
  expect(second.headers.Location).toBe(first.headers.Location);
  expect(await ordersOf(caller)).toHaveLength(1);
});

test('a replay with different whitespace and key order is the same payload', async () => {
  const caller = newCaller();
  const reordered = `{ "items": [ {"unitPriceCents":150, "quantity":2, "sku":"sku-apple"}, {"sku":"sku-pear","unitPriceCents":999,"quantity":1} ],\n "customerId": "cust-1" }`;

  const first = await post(caller, 'key-ws', VALID_ORDER);
  const second = await post(caller, 'key-ws', reordered);

  expect(second.statusCode).toBe(201);
  expect(second.body).toBe(first.body);
  expect(await ordersOf(caller)).toHaveLength(1);
});

test('the same key with a different body is 422 and still one order', async () => {
  const caller = newCaller();

  const first = await post(caller, 'key-422', VALID_ORDER);
  const second = await post(caller, 'key-422', { ...VALID_ORDER, customerId: 'someone-else' });

  expect(first.statusCode).toBe(201);
  expect(second.statusCode).toBe(422);
  expect(second.headers['Content-Type']).toBe('application/problem+json');
  expect(JSON.parse(second.body)).toMatchObject({ status: 422, title: 'Idempotency-Key reused' });
  expect(await ordersOf(caller)).toHaveLength(1);
});

test('20 concurrent requests with one key: one 201, the rest 409 or replay, no 5xx, one order', async () => {
  const caller = newCaller();

  const responses = await Promise.all(Array.from({ length: 20 }, () => post(caller, 'key-concurrent', VALID_ORDER)));

  const statuses = responses.map((r) => r.statusCode);
  const fresh = responses.filter((r) => r.statusCode === 201 && r.headers['Idempotent-Replayed'] === undefined);
  expect(fresh).toHaveLength(1);
  expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
  for (const r of responses.filter((r) => r.statusCode === 409)) expect(r.headers['Retry-After']).toBeDefined();
  expect(await ordersOf(caller)).toHaveLength(1);
});

test('two callers with the same key get two orders', async () => {
  const alice = newCaller();
  const bob = newCaller();

  const a = await post(alice, 'shared-key', VALID_ORDER);
  const b = await post(bob, 'shared-key', VALID_ORDER);

  expect(a.statusCode).toBe(201);
  expect(b.statusCode).toBe(201);
  expect(JSON.parse(a.body).orderId).not.toBe(JSON.parse(b.body).orderId);
  expect(await ordersOf(alice)).toHaveLength(1);
  expect(await ordersOf(bob)).toHaveLength(1);
});

test('a crash after the order transaction leaves a lock; once it expires the retry returns the same order, still one order', async () => {
  const caller = newCaller();
  // The function "dies" when it tries to mark the idempotency record complete.
  api.failNext((command, table) => command === 'UpdateItemCommand' && table === tables.names.Idempotency);

  const crashed = await post(caller, 'key-crash', VALID_ORDER, lambdaContext(1_500));
  const whileLocked = await post(caller, 'key-crash', VALID_ORDER);
  // The lock lasts the crashed invocation's remaining time (1.5 s): poll past it rather than sleep a guess.
  const retry = await pollUntil(
    () => post(caller, 'key-crash', VALID_ORDER),
    (r) => r.statusCode !== 409,
    { timeoutMs: 20_000, intervalMs: 250, what: 'past the lock' },
  );

  expect(crashed.statusCode).toBe(503);
  expect(whileLocked.statusCode).toBe(409);
  expect(retry.statusCode).toBe(201);
  const orders = await ordersOf(caller);
  expect(orders).toHaveLength(1);
  expect(JSON.parse(retry.body).orderId).toBe(orders[0].orderId);
  expect(JSON.parse(retry.body).createdAt).toBe(orders[0].createdAt);
});

test.each([
  ['no key', undefined],
  ['an empty quoted key', '""'],
  ['a 256-character key', 'k'.repeat(256)],
  ['a non-ASCII key', '"clé"'],
  ['two header lines', ['"a"', '"b"']],
])('%s is 400 and stores nothing', async (_name, key) => {
  const caller = newCaller();
  const recordsBefore = await idempotencyRecordCount();

  const response = await post(caller, key, VALID_ORDER);

  expect(response.statusCode).toBe(400);
  expect(response.headers['Content-Type']).toBe('application/problem+json');
  expect(JSON.parse(response.body)).toMatchObject({ status: 400, title: 'Invalid Idempotency-Key' });
  expect(await idempotencyRecordCount()).toBe(recordsBefore);
  expect(await ordersOf(caller)).toHaveLength(0);
});

test('an invalid body is 400 with field errors, stores nothing, and the corrected request with the same key is 201', async () => {
  const caller = newCaller();
  const recordsBefore = await idempotencyRecordCount();

  const rejected = await post(caller, 'key-fix', {
    customerId: '',
    items: [{ sku: 'a', quantity: 0, unitPriceCents: 1 }],
  });
  const recordsAfterRejection = await idempotencyRecordCount();
  const accepted = await post(caller, 'key-fix', VALID_ORDER);

  expect(rejected.statusCode).toBe(400);
  expect(JSON.parse(rejected.body).errors.map((e: { field: string }) => e.field)).toEqual(
    expect.arrayContaining(['customerId', 'items.0.quantity']),
  );
  expect(recordsAfterRejection).toBe(recordsBefore);
  expect(accepted.statusCode).toBe(201);
  expect(await ordersOf(caller)).toHaveLength(1);
});

test('ids SQS could not carry (U+FFFE in customerId, U+FFFF in a sku) are 400, store nothing, and the corrected request is 201', async () => {
  const caller = newCaller();
  const recordsBefore = await idempotencyRecordCount();
  const undeliverable = { customerId: 'cust-\uFFFE', items: [{ ...VALID_ORDER.items[0], sku: 'sku-\uFFFF' }] };

  const rejected = await post(caller, 'key-charset', undeliverable);
  const recordsAfterRejection = await idempotencyRecordCount();
  const accepted = await post(caller, 'key-charset', VALID_ORDER);

  expect(rejected.statusCode).toBe(400);
  expect(JSON.parse(rejected.body).errors.map((e: { field: string }) => e.field)).toEqual([
    'customerId',
    'items.0.sku',
  ]);
  expect(recordsAfterRejection).toBe(recordsBefore);
  expect(accepted.statusCode).toBe(201);
  expect(await ordersOf(caller)).toHaveLength(1);
});

test('two sessions of one role are one caller: one order, the second answer is the replay', async () => {
  const role = `arn:aws:sts::123456789012:assumed-role/Writer-${Date.now()}`;

  const first = await post(`${role}/ecs-task-a`, 'key-rotate', VALID_ORDER);
  const afterRotation = await post(`${role}/ecs-task-b`, 'key-rotate', VALID_ORDER);

  expect(first.statusCode).toBe(201);
  expect(afterRotation.statusCode).toBe(201);
  expect(afterRotation.headers['Idempotent-Replayed']).toBe('true');
  expect(afterRotation.body).toBe(first.body);
  expect(await ordersOf(role)).toHaveLength(1);
});

test('DynamoDB calls: a first request makes at most 3, a replay exactly 1', async () => {
  const caller = newCaller();

  await post(caller, 'key-count', VALID_ORDER);
  const firstCalls = api.calls().length;
  api.resetCalls();
  await post(caller, 'key-count', VALID_ORDER);
  const replayCalls = api.calls().length;

  expect(firstCalls).toBeLessThanOrEqual(3);
  expect(replayCalls).toBe(1);
});
