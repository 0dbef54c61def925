import type { SQSEvent } from 'aws-lambda';
import { orderPlacedEventId, orderTotalCents } from '../../lambdas/shop/domain/order';
import { orderCancelledEvent, orderPlacedEvent, type OrderPlacedEvent } from '../../lambdas/shop/domain/events';
import { apiEvent, lambdaContext } from '../support/api-events';
import { randomUUID } from 'node:crypto';
import { passesRelayFilter, receiveMatching } from '../support/messaging';
import { defaultStackTemplate } from '../support/synth';
import { PipelineFixture } from '../support/pipeline-fixture';

/**
 * The messaging half on DynamoDB Local and fauxqs: real stream records, real
 * queues, and the handlers invoked with the events Lambda would build. Every
 * test checks the exactly-once property directly: deliver more than once,
 * expect one effect.
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
  expect(log[`fulfilment:${orderPlacedEventId(orderId)}`].calls).toBe(1);
  expect(log[`loyalty:${orderPlacedEventId(orderId)}`].calls).toBe(1);
});

test('the relay marks each outbox item dispatched, and that MODIFY does not pass the filter', async () => {
  const { orderId } = await placeOrder();
  const relayed = await fixture.relayStream();

  const after = await fixture.stream.next({ outboxOnly: false });
  const outboxModifies = after.Records.filter(
    (r) => r.eventName === 'MODIFY' && r.dynamodb?.NewImage?.entity?.S === 'OUTBOX',
  );

  expect(outboxModifies.length).toBeGreaterThan(0);
  expect(outboxModifies.every((r) => r.dynamodb?.NewImage?.dispatchedAt !== undefined)).toBe(true);
  expect(outboxModifies.every((r) => r.dynamodb?.NewImage?.pendingShard === undefined)).toBe(true);
  expect(outboxModifies.filter(passesRelayFilter)).toEqual([]); // the deployed filter drops the dispatch mark
  expect(relayed.event.Records.length).toBeGreaterThan(0); // while it passed the outbox INSERT
  // Drain what the relay published (tests select their own messages by body; this keeps the queues short).
  await fixture.deliver('fulfilment', await fixture.receive('fulfilment', 1, orderId));
  await fixture.deliver('loyalty', await fixture.receive('loyalty', 1, orderId));
});

test('a producer resend with a new messageId is applied once, and reaches the provider once', async () => {
  const order = uniqueOrder();
  const event = placedEvent('ord_resend0000000000000000000000000', order);
  await fixture.send(fixture.queues.standardQueueUrl, JSON.stringify(event));
  await fixture.send(fixture.queues.standardQueueUrl, JSON.stringify(event));
  const [first, resent] = (await fixture.receive('loyalty', 2, event.eventId)).Records;

  await fixture.deliver('loyalty', { Records: [first] } as SQSEvent);
  await fixture.deliver('loyalty', { Records: [resent] } as SQSEvent);

  expect(first.messageId).not.toBe(resent.messageId);
  expect(pointsOf(await fixture.effects(), order.customerId)).toBe(17);
  // The first delivery recorded the e-mail done on its inbox entry: the resend leaves the provider alone.
  expect((await fixture.providerLog())[`loyalty:${event.eventId}`].calls).toBe(1);
  expect((await fixture.effects())[`INBOX#loyalty#${event.eventId}`].providerCallDoneAt).toEqual(expect.any(String));
});

test('a crash after the transaction but before the ack: the redelivery is suppressed', async () => {
  const order = uniqueOrder();
  const event = placedEvent('ord_crash00000000000000000000000000', order);
  await fixture.sendToFifo(event);

  const first = await fixture.receive('fulfilment', 1, event.eventId);
  await fixture.deliver('fulfilment', first, { crashBeforeAck: true });
  await fixture.makeVisibleAgain(fixture.queues.fifoQueueUrl, first.Records[0].receiptHandle);
  const redelivery = await fixture.receive('fulfilment', 1, event.eventId);
  const response = await fixture.deliver('fulfilment', redelivery);

  expect(redelivery.Records[0].attributes.ApproximateReceiveCount).toBe('2');
  expect(response.batchItemFailures).toEqual([]);
  expect((await fixture.effects())[`SKU#${order.items[0].sku}`].reserved).toBe(3);
});

test('two concurrent deliveries of one message: one applied, the other duplicate or transient; redelivered, one effect and one provider call', async () => {
  const order = uniqueOrder();
  const event = placedEvent('ord_concurrent000000000000000000000', order);
  await fixture.send(fixture.queues.standardQueueUrl, JSON.stringify(event));
  const batch = await fixture.receive('loyalty', 1, event.eventId);

  const responses = await Promise.all([
    fixture.deliver('loyalty', batch, { crashBeforeAck: true }),
    fixture.deliver('loyalty', batch, { crashBeforeAck: true }),
  ]);
  // DynamoDB may cancel the loser with TransactionConflict, or the loser finds the provider call leased by the
  // winner (both transient, with a backoff of a second or two): the queue redelivers it.
  await fixture.makeVisibleAgain(fixture.queues.standardQueueUrl, batch.Records[0].receiptHandle);
  const redelivery = await fixture.deliver('loyalty', await fixture.receive('loyalty', 1, event.eventId));

  expect(responses.filter((r) => r.batchItemFailures.length > 0).length).toBeLessThanOrEqual(1);
  expect(redelivery.batchItemFailures).toEqual([]);
  expect(pointsOf(await fixture.effects(), order.customerId)).toBe(17);
  // The lease: the copy that lost the claim never called the mail provider while the winner did.
  expect((await fixture.providerLog())[`loyalty:${event.eventId}`].calls).toBe(1);
});

test('a poison (permanent) message goes to the DLQ at once with its cause, without burning retries', async () => {
  const poison = `{"this is": "not an order event", "n": "${randomUUID()}"}`;
  await fixture.send(fixture.queues.standardQueueUrl, poison);
  const batch = await fixture.receive('loyalty', 1, poison);

  const response = await fixture.deliver('loyalty', batch);
  const dlq = await receiveMatching(fixture.queues.standardDlqUrl, 1, poison);

  expect(response.batchItemFailures).toEqual([]);
  expect(dlq.Records).toHaveLength(1);
  const attributes = dlq.Records[0].messageAttributes;
  expect(attributes.failureCause.stringValue).toBe('SchemaViolation');
  expect(attributes.consumer.stringValue).toBe('loyalty');
  expect(attributes.attempt.stringValue).toBe('1');
  expect(dlq.Records[0].body).toBe(poison);
});

test('a message that keeps failing transiently reaches the DLQ after maxReceiveCount attempts, then a redrive applies it once', async () => {
  const order = uniqueOrder();
  const event = placedEvent('ord_transient0000000000000000000000', order);
  await fixture.send(fixture.queues.standardQueueUrl, JSON.stringify(event));
  fixture.dynamoCalls.loyalty.failWhen = (command) => command === 'TransactWriteItemsCommand';

  // The deployed maxReceiveCount (derived from the retry budget), as the fixture's queues have it.
  const resources = defaultStackTemplate().Resources as Record<
    string,
    { Properties?: { RedrivePolicy?: { maxReceiveCount: number } } }
  >;
  const maxReceiveCount = Object.entries(resources).find(([id]) => id.startsWith('PipelinesLoyaltyQueuesQueue'))![1]
    .Properties!.RedrivePolicy!.maxReceiveCount;
  const failures: number[] = [];
  for (let attempt = 1; attempt <= maxReceiveCount; attempt++) {
    const batch = await fixture.receive('loyalty', 1, event.eventId);
    if (batch.Records.length === 0) break;
    failures.push((await fixture.deliver('loyalty', batch)).batchItemFailures.length);
  }
  const afterFive = await fixture.receive('loyalty', 1, event.eventId);
  fixture.dynamoCalls.loyalty.failWhen = undefined;
  const redriven = await fixture.redrive(
    fixture.queues.standardDlqUrl,
    fixture.queues.standardQueueUrl,
    false,
    event.eventId,
  );
  await fixture.deliver('loyalty', await fixture.receive('loyalty', 1, event.eventId));

  expect(failures).toEqual(Array(maxReceiveCount).fill(1));
  expect(afterFive.Records).toHaveLength(0);
  expect(redriven).toBe(1);
  expect(pointsOf(await fixture.effects(), order.customerId)).toBe(17);
});

test('redriving a DLQ copy of an applied message (receive, send, delete) makes no second effect', async () => {
  const order = uniqueOrder();
  const event = placedEvent('ord_redrive00000000000000000000000', order);
  await fixture.send(fixture.queues.standardQueueUrl, JSON.stringify(event));
  await fixture.deliver('loyalty', await fixture.receive('loyalty', 1, event.eventId));
  await fixture.send(fixture.queues.standardDlqUrl, JSON.stringify(event)); // the same event also sits in the DLQ

  const redriven = await fixture.redrive(
    fixture.queues.standardDlqUrl,
    fixture.queues.standardQueueUrl,
    false,
    event.eventId,
  );
  const response = await fixture.deliver('loyalty', await fixture.receive('loyalty', 1, event.eventId));

  expect(redriven).toBe(1);
  expect(response.batchItemFailures).toEqual([]);
  expect(pointsOf(await fixture.effects(), order.customerId)).toBe(17);
});

test('a cancel delivered before its place: nothing reserved at the end, the late place is ignored as stale', async () => {
  const order = uniqueOrder();
  const orderId = 'ord_cancelfirst00000000000000000000';
  const placed = placedEvent(orderId, order);
  const cancelled = orderCancelledEvent({ orderId, ...order }, new Date().toISOString());
  await fixture.sendToFifo(cancelled);
  await fixture.sendToFifo(placed);

  await fixture.deliver('fulfilment', await fixture.receive('fulfilment', 1, orderId));
  await fixture.deliver('fulfilment', await fixture.receive('fulfilment', 1, orderId));

  const effects = await fixture.effects();
  expect(effects[`SKU#${order.items[0].sku}`]).toBeUndefined();
  expect(effects[`FULFILMENT#${orderId}`]).toMatchObject({ version: 2, state: 'CANCELLED_UNRESERVED' });
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
  expect(effects[`FULFILMENT#${orderId}`]).toMatchObject({ version: 2, state: 'RELEASED' });
  expect(pointsOf(effects, order.customerId)).toBe(17);
});

test('a relay crash after publishing, then its retry: consumers still apply once', async () => {
  const { order, orderId } = await placeOrder();
  const event = await fixture.stream.next();

  await fixture.relay(event, lambdaContext()); // published, then "crashed" before Lambda checkpointed
  await fixture.relay(event, lambdaContext()); // Lambda retries the same records
  const loyaltyBatch = await fixture.receive('loyalty', 2, orderId);
  await fixture.deliver('loyalty', loyaltyBatch);
  await fixture.deliver('fulfilment', await fixture.receive('fulfilment', 1, orderId));
  const fifoAfter = await fixture.receive('fulfilment', 1, orderId);

  expect(loyaltyBatch.Records).toHaveLength(2); // the standard queue got the event twice
  expect(fifoAfter.Records).toHaveLength(0); // the FIFO queue deduplicated the resend by eventId
  const effects = await fixture.effects();
  expect(pointsOf(effects, order.customerId)).toBe(17);
  expect(effects[`SKU#${order.items[0].sku}`].reserved).toBe(3);
});

test('a duplicate after the provider call failed (the effect committed) calls the provider once more; later copies do not', async () => {
  const order = uniqueOrder();
  const event = placedEvent('ord_providerdown000000000000000000', order);
  await fixture.send(fixture.queues.standardQueueUrl, JSON.stringify(event));
  await fixture.send(fixture.queues.standardQueueUrl, JSON.stringify(event)); // a later copy (a resend)
  // The provider write (UpdateItem on the provider log) fails: the mail service is down after our commit.
  fixture.dynamoCalls.loyalty.failWhen = (command, input) =>
    command === 'UpdateItemCommand' && input.TableName === fixture.tables.names.ProviderLog;

  const failed = await fixture.deliver('loyalty', await fixture.receive('loyalty', 1, event.eventId));
  fixture.dynamoCalls.loyalty.failWhen = undefined;
  const inboxAfterFailure = (await fixture.effects())[`INBOX#loyalty#${event.eventId}`];
  // The failed message comes back at once (backoff 0 here); then the other copy. Either order.
  await fixture.deliver('loyalty', await fixture.receive('loyalty', 1, event.eventId));
  const callsAfterRetry = (await fixture.providerLog())[`loyalty:${event.eventId}`]?.calls;
  await fixture.deliver('loyalty', await fixture.receive('loyalty', 1, event.eventId));
  const leftOver = await receiveMatching(fixture.queues.standardQueueUrl, 1, event.eventId, 500);

  expect(failed.batchItemFailures).toHaveLength(1);
  expect(inboxAfterFailure.providerCallDoneAt).toBeUndefined();
  expect(callsAfterRetry).toBe(1);
  expect(leftOver.Records).toHaveLength(0);
  expect((await fixture.providerLog())[`loyalty:${event.eventId}`].calls).toBe(1);
  expect(pointsOf(await fixture.effects(), order.customerId)).toBe(17);
});

test('the warehouse down until OrderPlaced dead-letters, then the cancel goes through: the redriven OrderPlaced sends no PICK', async () => {
  const order = uniqueOrder();
  const orderId = 'ord_pickaftercancel0000000000000000';
  const placed = placedEvent(orderId, order);
  const cancelled = orderCancelledEvent({ orderId, ...order }, new Date().toISOString());
  await fixture.sendToFifo(placed);
  // The warehouse is down: its log write fails (the consumer's own try counter still works).
  fixture.dynamoCalls.fulfilment.failWhen = (command, input) =>
    command === 'UpdateItemCommand' && input.TableName === fixture.tables.names.ProviderLog;

  // Until the FIFO consumer spends its try budget and dead-letters OrderPlaced itself.
  for (let attempt = 1; attempt <= 30; attempt++) {
    const batch = await fixture.receive('fulfilment', 1, orderId);
    if (batch.Records.length === 0) break;
    await fixture.deliver('fulfilment', batch);
  }
  fixture.dynamoCalls.fulfilment.failWhen = undefined;
  await fixture.sendToFifo(cancelled);
  const cancelResponse = await fixture.deliver('fulfilment', await fixture.receive('fulfilment', 1, orderId));
  const redriven = await fixture.redrive(fixture.queues.fifoDlqUrl, fixture.queues.fifoQueueUrl, true, orderId);
  const redriveResponse = await fixture.deliver('fulfilment', await fixture.receive('fulfilment', 1, orderId));

  expect(cancelResponse.batchItemFailures).toEqual([]);
  expect(redriven).toBe(1);
  expect(redriveResponse.batchItemFailures).toEqual([]);
  const log = await fixture.providerLog();
  expect(log[`fulfilment:${cancelled.eventId}`].calls).toBe(1);
  expect(log[`fulfilment:${placed.eventId}`]).toBeUndefined(); // no PICK, before or after the CANCEL_PICK
  const effects = await fixture.effects();
  expect(effects[`SKU#${order.items[0].sku}`].reserved).toBe(0);
  expect(effects[`FULFILMENT#${orderId}`]).toMatchObject({ version: 2, state: 'RELEASED' });
  expect(effects[`INBOX#fulfilment#${placed.eventId}`].supersededBy).toBe(cancelled.eventId);
});

test('DynamoDB calls per consumed message: first delivery and duplicate', async () => {
  const order = uniqueOrder();
  const event = placedEvent('ord_callcount000000000000000000000', order);
  await fixture.send(fixture.queues.standardQueueUrl, JSON.stringify(event));
  await fixture.send(fixture.queues.standardQueueUrl, JSON.stringify(event));
  const [first, duplicate] = (await fixture.receive('loyalty', 2, event.eventId)).Records;

  await fixture.deliver('loyalty', { Records: [first] } as SQSEvent);
  const firstCalls = fixture.dynamoCalls.loyalty.calls.splice(0);
  await fixture.deliver('loyalty', { Records: [duplicate] } as SQSEvent);
  const duplicateCalls = fixture.dynamoCalls.loyalty.calls.splice(0);

  // First: claim + effect in one transaction, the provider call (a write here, the recording stand-in),
  // then the call recorded done on the inbox entry. Duplicate: the failed claim returns that entry
  // (ALL_OLD), which says done: no read, no provider call, nothing else.
  expect(firstCalls).toEqual(['TransactWriteItemsCommand', 'UpdateItemCommand', 'UpdateItemCommand']);
  expect(duplicateCalls).toEqual(['TransactWriteItemsCommand']);
});
