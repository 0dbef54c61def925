import { providerKey } from '@exactly-once/runtime';
import { orderPlacedEventId, orderTotalCents } from '../../lambdas/shop/domain/order';
import { orderCancelledEvent, orderPlacedEvent, type OrderPlacedEvent } from '../../lambdas/shop/domain/events';
import { apiEvent, lambdaContext } from '../support/api-events';
import { PipelineFixture } from '../support/pipeline-fixture';

/**
 * The shop's pipeline on DynamoDB Local and fauxqs: orders placed and cancelled through its API,
 * relayed from the real stream, applied by fulfilment and loyalty (their stock and points). The
 * mechanism's own pipeline guarantees are proved on the neutral fixture (pipelines.test.ts).
 */
const fixture = new PipelineFixture();

// A generous bound: five handler modules load while other suites may be using both cores.
beforeAll(() => fixture.start({ extraEnv: { BACKOFF_BASE_SECONDS: '0', BACKOFF_CAP_SECONDS: '0' } }), 180_000);
afterAll(() => fixture.stop());
beforeEach(() => {
  for (const log of Object.values(fixture.dynamoCalls)) {
    log.calls.length = 0;
    log.failWhen = undefined;
  }
});

let seq = 0;
function uniqueOrder() {
  seq += 1;
  const tag = `${Date.now()}-${seq}`;
  return {
    customerId: `cust-${tag}`,
    items: [
      { sku: `sku-a-${tag}`, quantity: 3, unitPriceCents: 250 },
      { sku: `sku-b-${tag}`, quantity: 1, unitPriceCents: 1_000 },
    ],
  };
}

async function placeOrder(order = uniqueOrder()) {
  const response = await fixture.createOrder(
    apiEvent({
      method: 'POST',
      path: '/orders',
      headers: { 'Idempotency-Key': `k-${seq}-${Date.now()}` },
      body: JSON.stringify(order),
    }),
    lambdaContext(),
  );
  expect(response.statusCode).toBe(201);
  return { order, orderId: JSON.parse(response.body).orderId as string };
}

/**
 * The points of the customer `customerId`: through the API its item is the caller's
 * (`CUSTOMER#<caller>#<customerId>`, the tenant the order's events carry); from an event built here
 * without a caller, `CUSTOMER#<customerId>`. Each test's customer is its own, so there is one.
 */
function pointsOf(effects: Record<string, Record<string, unknown>>, customerId: string): unknown {
  const items = Object.entries(effects).filter(
    ([pk]) => pk === `CUSTOMER#${customerId}` || (pk.startsWith('CUSTOMER#') && pk.endsWith(`#${customerId}`)),
  );
  expect(items).toHaveLength(1);
  return items[0][1].points;
}

/** Fulfilment's item for the order: its sequenced ledger's entity item, with the order's tenant if it has one. */
function fulfilmentOf(effects: Record<string, Record<string, unknown>>, orderId: string): Record<string, unknown> {
  const found = Object.entries(effects).filter(
    ([pk]) => pk.startsWith('EFFECT#fulfilment#') && pk.endsWith(`#${orderId}`),
  );
  expect(found).toHaveLength(1);
  return found[0][1];
}

function placedEvent(orderId: string, order: ReturnType<typeof uniqueOrder>): OrderPlacedEvent {
  return orderPlacedEvent({ orderId, ...order, totalCents: orderTotalCents(order.items) }, new Date().toISOString());
}

test('an order flows from the outbox through both queues: one reservation, one credit, one call per provider key', async () => {
  const { order, orderId } = await placeOrder();

  const relayed = await fixture.relayStream();
  await fixture.deliver('fulfilment', await fixture.receive('fulfilment', 1, orderId));
  await fixture.deliver('loyalty', await fixture.receive('loyalty', 1, orderId));

  expect(relayed.response.batchItemFailures).toEqual([]);
  const effects = await fixture.effects();
  expect(effects[`SKU#${order.items[0].sku}`].reserved).toBe(3);
  expect(effects[`SKU#${order.items[1].sku}`].reserved).toBe(1);
  expect(pointsOf(effects, order.customerId)).toBe(17); // floor(1750 / 100)
  const log = await fixture.providerLog();
  // Through the API the order's events carry its caller (apiEvent's default) as tenant: keys with its hash.
  const placed = { eventId: orderPlacedEventId(orderId), tenant: 'arn:aws:iam::123456789012:user/alice' };
  expect(log[providerKey('fulfilment', placed)].calls).toBe(1);
  expect(log[providerKey('loyalty', placed)].calls).toBe(1);
});

test('a cancel delivered before its place: nothing reserved at the end, the late place is ignored as stale', async () => {
  const order = uniqueOrder();
  const orderId = 'ord_cancelfirst00000000000000000000';
  const placed = placedEvent(orderId, order);
  const cancelled = orderCancelledEvent({ orderId, ...order }, new Date().toISOString());
  await fixture.sendToFifo('fulfilment', cancelled);
  await fixture.sendToFifo('fulfilment', placed);

  await fixture.deliver('fulfilment', await fixture.receive('fulfilment', 1, orderId));
  await fixture.deliver('fulfilment', await fixture.receive('fulfilment', 1, orderId));

  const effects = await fixture.effects();
  expect(effects[`SKU#${order.items[0].sku}`]).toBeUndefined();
  expect(fulfilmentOf(effects, orderId)).toMatchObject({ seq: 2, state: 'CANCELLED_UNRESERVED' });
  const log = await fixture.providerLog();
  expect(log[`fulfilment:${placed.eventId}`]).toBeUndefined(); // a stale event tells the warehouse nothing
});

test('place then cancel through the API: reserved goes up then back to zero, points stay', async () => {
  const { order, orderId } = await placeOrder();
  await fixture.cancelOrder(
    apiEvent({ method: 'POST', path: `/orders/${orderId}/cancel`, pathParameters: { orderId } }),
    lambdaContext(),
  );

  await fixture.relayStream();
  // FIFO: the cancel becomes receivable only once the place is acked (one group, in order).
  await fixture.deliver('fulfilment', await fixture.receive('fulfilment', 1, orderId));
  await fixture.deliver('fulfilment', await fixture.receive('fulfilment', 1, orderId));
  await fixture.deliver('loyalty', await fixture.receive('loyalty', 1, orderId));

  const effects = await fixture.effects();
  expect(effects[`SKU#${order.items[0].sku}`].reserved).toBe(0);
  expect(fulfilmentOf(effects, orderId)).toMatchObject({ seq: 2, state: 'RELEASED' });
  expect(pointsOf(effects, order.customerId)).toBe(17);
});
