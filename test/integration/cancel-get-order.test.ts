import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { deriveOrderId } from '../../lambdas/shop/domain/order';
import { apiEvent, lambdaContext, VALID_ORDER } from '../support/api-events';
import { useApiOnEmulators, type ApiHandler } from '../support/api-on-emulators';
import { scanAll, testDynamoDbClient } from '../support/dynamodb';

/**
 * Placing, cancelling and reading orders against DynamoDB Local, with the
 * tables created as the synthesized stack declares them. Each test uses its
 * own caller, so tests never share orders.
 */
const api = useApiOnEmulators(['create-order', 'cancel-order', 'get-order'] as const);
const tables = {
  get names() {
    return api.tables();
  },
};
const createOrder: ApiHandler = (event, context) => api.handler('create-order')(event, context);
const cancelOrder: ApiHandler = (event, context) => api.handler('cancel-order')(event, context);
const getOrder: ApiHandler = (event, context) => api.handler('get-order')(event, context);

let callerSeq = 0;
function newCaller(): string {
  callerSeq += 1;
  return `arn:aws:iam::123456789012:user/cancel-get-${callerSeq}-${Date.now()}`;
}

async function place(caller: string, key = 'key-1') {
  const response = await createOrder(
    apiEvent({
      method: 'POST',
      path: '/orders',
      caller,
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': `"${key}"` },
      body: JSON.stringify(VALID_ORDER),
    }),
    lambdaContext(),
  );
  return {
    response,
    order: JSON.parse(response.body) as { orderId: string; createdAt: string } & Record<string, unknown>,
  };
}

function cancel(caller: string, orderId: string) {
  return cancelOrder(
    apiEvent({
      method: 'POST',
      path: `/orders/${orderId}/cancel`,
      resource: '/orders/{orderId}/cancel',
      caller,
      pathParameters: { orderId },
    }),
    lambdaContext(),
  );
}

function get(caller: string, orderId: string, headers: Record<string, string | string[]> = {}) {
  return getOrder(
    apiEvent({
      method: 'GET',
      path: `/orders/${orderId}`,
      resource: '/orders/{orderId}',
      caller,
      headers,
      pathParameters: { orderId },
    }),
    lambdaContext(),
  );
}

/** Every item of an order's partition: the order and its outbox items. */
async function partition(orderId: string) {
  const items = await scanAll(tables.names.Orders);
  return items.filter((i) => i.pk === `ORDER#${orderId}`);
}

const outboxOf = (items: Record<string, unknown>[], type: string) =>
  items.filter((i) => i.entity === 'OUTBOX' && i.type === type);

describe('placing an order', () => {
  test("writes exactly one order, one OrderPlaced outbox item and the caller's customer access, in one transaction", async () => {
    const caller = newCaller();

    const { response, order } = await place(caller);

    expect(response.statusCode).toBe(201);
    const items = await partition(order.orderId);
    expect(items).toHaveLength(2);
    const stored = items.find((i) => i.sk === 'ORDER');
    expect(stored).toMatchObject({
      entity: 'ORDER',
      orderId: order.orderId,
      status: 'PLACED',
      caller,
      customerId: VALID_ORDER.customerId,
      items: VALID_ORDER.items,
      createdAt: order.createdAt,
      version: 1,
      fingerprint: expect.any(String),
    });
    expect(stored).not.toHaveProperty('pendingShard');
    const [outbox] = outboxOf(items, 'OrderPlaced');
    const eventId = `${order.orderId}.placed`;
    expect(outbox).toMatchObject({
      sk: `OUTBOX#${eventId}`,
      eventId,
      entityId: order.orderId,
      createdAt: order.createdAt,
      pendingShard: expect.stringMatching(/^\d+$/),
      event: {
        eventId,
        type: 'OrderPlaced',
        entityId: order.orderId,
        version: 1,
        occurredAt: order.createdAt,
        payload: {
          customerId: VALID_ORDER.customerId,
          items: VALID_ORDER.items,
          totalCents: order.totalCents,
        },
      },
    });
    // Who may read the customer (GET /customers/{id}): one item per order, in a partition of its own.
    const access = (await scanAll(tables.names.Orders)).filter(
      (i) => i.entity === 'CUSTOMER_ACCESS' && i.sk === `ORDER#${order.orderId}`,
    );
    expect(access).toEqual([
      {
        pk: `CALLER#${caller}#CUSTOMER#${VALID_ORDER.customerId}`,
        sk: `ORDER#${order.orderId}`,
        entity: 'CUSTOMER_ACCESS',
      },
    ]);
    // All three items came from one TransactWriteItems; nothing else wrote to the Orders table.
    expect(api.calls().filter((c) => c.command === 'TransactWriteItemsCommand')).toEqual([
      { command: 'TransactWriteItemsCommand', table: 'transaction', transactItems: 3 },
    ]);
    expect(api.calls().filter((c) => c.table === tables.names.Orders)).toEqual([]);
  });

  test('if the outbox item cannot be written, neither is the order (one transaction)', async () => {
    const caller = newCaller();
    const orderId = deriveOrderId(caller, 'key-atomic');
    // A leftover outbox item with the event id this order will use makes the outbox put's condition fail.
    const client = testDynamoDbClient();
    await client.send(
      new PutItemCommand({
        TableName: tables.names.Orders,
        Item: marshall({
          pk: `ORDER#${orderId}`,
          sk: `OUTBOX#${orderId}.placed`,
          entity: 'OUTBOX',
          type: 'Blocker',
        }),
      }),
    );
    client.destroy();

    const { response } = await place(caller, 'key-atomic');

    // A condition failure on the outbox put is a state no retry can fix (a bug, not a dependency
    // outage): 500 without Retry-After, and never a 201 for an unwritten order.
    expect(response.statusCode).toBe(500);
    expect(response.headers['Retry-After']).toBeUndefined();
    expect((await partition(orderId)).filter((i) => i.sk === 'ORDER')).toEqual([]);
    // Nor is the caller's access to the customer: it would let the caller read a customer it has no order for.
    expect((await scanAll(tables.names.Orders)).filter((i) => i.sk === `ORDER#${orderId}`)).toEqual([]);
  });
});

describe('cancelling', () => {
  test('twice returns the cancelled order both times and writes exactly one OrderCancelled outbox item', async () => {
    const caller = newCaller();
    const { order } = await place(caller);

    const first = await cancel(caller, order.orderId);
    api.resetCalls();
    const second = await cancel(caller, order.orderId);

    expect(first.statusCode).toBe(200);
    expect(second.statusCode).toBe(200);
    const cancelled = JSON.parse(first.body);
    expect(cancelled).toEqual({ ...order, status: 'CANCELLED', cancelledAt: expect.any(String) });
    expect(JSON.parse(second.body)).toEqual(cancelled);
    // The second cancel only read.
    expect(api.calls().map((c) => c.command)).toEqual(['GetItemCommand']);

    const items = await partition(order.orderId);
    expect(items).toHaveLength(3);
    expect(items.find((i) => i.sk === 'ORDER')).toMatchObject({
      status: 'CANCELLED',
      cancelledAt: cancelled.cancelledAt,
      version: 2,
    });
    expect(outboxOf(items, 'OrderPlaced')).toHaveLength(1);
    const cancelledEvents = outboxOf(items, 'OrderCancelled');
    expect(cancelledEvents).toHaveLength(1);
    const eventId = `${order.orderId}.cancelled`;
    expect(cancelledEvents[0]).toMatchObject({
      sk: `OUTBOX#${eventId}`,
      eventId,
      pendingShard: expect.stringMatching(/^\d+$/),
      event: {
        eventId,
        type: 'OrderCancelled',
        version: 2,
        entityId: order.orderId,
        occurredAt: cancelled.cancelledAt,
      },
    });
  });

  test('concurrently: no 4xx/5xx other than 503, one cancellation time, one OrderCancelled item', async () => {
    const caller = newCaller();
    const { order } = await place(caller);

    const responses = await Promise.all(Array.from({ length: 8 }, () => cancel(caller, order.orderId)));

    const statuses = responses.map((r) => r.statusCode);
    expect(statuses.every((s) => s === 200 || s === 503)).toBe(true);
    expect(statuses).toContain(200);
    const cancelledAts = new Set(
      responses.filter((r) => r.statusCode === 200).map((r) => JSON.parse(r.body).cancelledAt),
    );
    expect(cancelledAts.size).toBe(1);
    expect(outboxOf(await partition(order.orderId), 'OrderCancelled')).toHaveLength(1);
  });

  test('an unknown order is 404 and writes nothing', async () => {
    const caller = newCaller();
    const orderId = deriveOrderId(caller, 'never-placed');
    const itemsBefore = (await scanAll(tables.names.Orders)).length;

    const response = await cancel(caller, orderId);

    expect(response.statusCode).toBe(404);
    expect(response.headers['Content-Type']).toBe('application/problem+json');
    expect(await partition(orderId)).toEqual([]);
    expect((await scanAll(tables.names.Orders)).length).toBe(itemsBefore);
  });

  test("another caller's order is 404 and stays placed", async () => {
    const owner = newCaller();
    const intruder = newCaller();
    const { order } = await place(owner);

    const response = await cancel(intruder, order.orderId);

    expect(response.statusCode).toBe(404);
    const items = await partition(order.orderId);
    expect(items.find((i) => i.sk === 'ORDER')).toMatchObject({ status: 'PLACED' });
    expect(outboxOf(items, 'OrderCancelled')).toEqual([]);
  });
});

describe('reading', () => {
  test('the own order is 200 and shows what was placed, then what was cancelled', async () => {
    const caller = newCaller();
    const { order } = await place(caller);

    const placed = await get(caller, order.orderId);
    const cancelled = await cancel(caller, order.orderId);
    const afterCancel = await get(caller, order.orderId);

    expect(placed.statusCode).toBe(200);
    expect(JSON.parse(placed.body)).toEqual(order);
    expect(afterCancel.statusCode).toBe(200);
    expect(JSON.parse(afterCancel.body)).toEqual(JSON.parse(cancelled.body));
  });

  test("another caller's order is 404, exactly like an unknown one", async () => {
    const owner = newCaller();
    const other = newCaller();
    const { order } = await place(owner);

    const othersOrder = await get(other, order.orderId);
    const unknown = await get(other, deriveOrderId(other, 'never-placed'));

    expect(othersOrder.statusCode).toBe(404);
    expect(unknown.statusCode).toBe(404);
    expect(JSON.parse(othersOrder.body)).toEqual({ ...JSON.parse(unknown.body), detail: expect.any(String) });
    expect(othersOrder.body).not.toContain(owner);
  });

  test('an Idempotency-Key on a GET is ignored: same answer, nothing stored', async () => {
    const caller = newCaller();
    const { order } = await place(caller);
    const idempotencyRecords = (await scanAll(tables.names.Idempotency)).length;

    const plain = await get(caller, order.orderId);
    const withKey = await get(caller, order.orderId, { 'Idempotency-Key': '"read-key"' });
    const withBadKeys = await get(caller, order.orderId, { 'Idempotency-Key': ['"a"', 'not valid'] });

    for (const response of [withKey, withBadKeys]) {
      expect(response.statusCode).toBe(200);
      expect(response.body).toBe(plain.body);
    }
    expect((await scanAll(tables.names.Idempotency)).length).toBe(idempotencyRecords);
  });
});

describe('people: two users of one SAML role (configured as people) are two callers', () => {
  test("each reads and cancels only their own orders; a workload role's sessions stay one caller", async () => {
    const samlRole = `arn:aws:sts::123456789012:assumed-role/Okta-ShopOperators-${Date.now()}`;
    const [jane, john] = [`${samlRole}/jane.doe@example.com`, `${samlRole}/john.roe@example.com`];
    const { order } = await place(jane, 'people-key');

    const johnReads = await get(john, order.orderId);
    const johnCancels = await cancel(john, order.orderId);
    const janeReads = await get(jane, order.orderId);
    // John's own order with the same key is another order: keys are per person.
    const { order: johnsOrder } = await place(john, 'people-key');

    expect(johnReads.statusCode).toBe(404);
    expect(johnCancels.statusCode).toBe(404);
    expect(janeReads.statusCode).toBe(200);
    expect(JSON.parse(janeReads.body)).toMatchObject({ orderId: order.orderId, status: 'PLACED' });
    expect(johnsOrder.orderId).not.toBe(order.orderId);
    expect((await partition(order.orderId)).find((i) => i.sk === 'ORDER')).toMatchObject({ caller: jane });
    expect((await cancel(jane, order.orderId)).statusCode).toBe(200);

    const workload = `arn:aws:sts::123456789012:assumed-role/OrderService-${Date.now()}`;
    const { order: workloadOrder } = await place(`${workload}/i-0abc123def4567890`, 'workload-key');
    const afterRotation = await cancel(`${workload}/botocore-session-1700000000`, workloadOrder.orderId);
    expect(afterRotation.statusCode).toBe(200);
  });
});
