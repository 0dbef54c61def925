import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SQSEvent } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { lambdaContext } from '@exactly-once/runtime/testing';
import { thingHappened, thingUndone, type ThingHappened } from '../exactly-once/fixtures/probe-events';
import { PROBE_LEDGER_SPEC } from '../exactly-once/fixtures/probe-ledger-spec';
import { probeStateKey, probeTallyKey } from '../exactly-once/fixtures/probe-ledger';
import { PROBE_FIFO_SPEC, PROBE_SPEC } from '../exactly-once/fixtures/probe-spec';
import { recordThing } from '../exactly-once/fixtures/probe-things';
import { testDynamoDbClient } from '../support/emulated-dynamodb';
import { receiveMatching } from '../support/emulated-messaging';
import { EmulatedPipeline } from '../support/emulated-pipeline';

/**
 * The mechanism's messaging half on DynamoDB Local and fauxqs, on the neutral fixture: real stream
 * records, real queues, and the relay and the probe consumers invoked with the events Lambda would
 * build. Every test checks the exactly-once property directly: deliver more than once, expect one
 * effect (the generic effect's `appliedCount`, the probe ledger's tally) and one provider call.
 */
const pipeline = new EmulatedPipeline();
const STANDARD = PROBE_SPEC.name;
const FIFO = PROBE_FIFO_SPEC.name;
const LEDGER = PROBE_LEDGER_SPEC.name;
let documents: DynamoDBDocumentClient;

// A generous bound: four handler modules load while other suites may be using both cores.
beforeAll(async () => {
  await pipeline.start({ extraEnv: { BACKOFF_BASE_SECONDS: '0', BACKOFF_CAP_SECONDS: '0' } });
  documents = DynamoDBDocumentClient.from(testDynamoDbClient());
}, 180_000);
afterAll(async () => {
  documents.destroy();
  await pipeline.stop();
});
beforeEach(() => {
  for (const log of Object.values(pipeline.dynamoCalls)) {
    log.calls.length = 0;
    log.failWhen = undefined;
  }
});

let seq = 0;
/** A thing no other test uses; its id marks this test's messages on the shared queues. */
function uniqueThing(name: string): string {
  seq += 1;
  return `thing-${name}-${Date.now()}-${seq}`;
}

/** A thing and its ThingHappened written in one transaction, as a producer does: the outbox item's INSERT is on the stream. */
async function recordHappened(): Promise<ThingHappened> {
  const event = thingHappened(uniqueThing('flow'));
  await recordThing(documents, pipeline.tables.names.Things, event);
  return event;
}

/** How many times the generic effect of `consumer` applied an event to the entity (undefined: never). */
async function appliedCount(consumer: string, entityId: string): Promise<unknown> {
  return (await pipeline.effects())[`EFFECT#${consumer}#${entityId}`]?.appliedCount;
}

test('an event flows from the outbox through every queue that takes it: one effect per consumer, one call per provider key', async () => {
  const event = await recordHappened();

  const relayed = await pipeline.relayStream();
  for (const consumer of [STANDARD, FIFO, LEDGER])
    await pipeline.deliver(consumer, await pipeline.receive(consumer, 1, event.entityId));

  expect(relayed.response.batchItemFailures).toEqual([]);
  expect(await appliedCount(STANDARD, event.entityId)).toBe(1);
  expect(await appliedCount(FIFO, event.entityId)).toBe(1);
  expect((await pipeline.effects())[probeTallyKey(event.entityId).pk].tally).toBe(1);
  const log = await pipeline.providerLog();
  for (const consumer of [STANDARD, FIFO, LEDGER]) expect(log[`${consumer}:${event.eventId}`].calls).toBe(1);
});

test('the relay marks each outbox item dispatched, and that MODIFY does not pass the filter', async () => {
  const event = await recordHappened();
  const relayed = await pipeline.relayStream();

  const after = await pipeline.stream.next({ outboxOnly: false });
  const outboxModifies = after.Records.filter(
    (r) => r.eventName === 'MODIFY' && r.dynamodb?.NewImage?.entity?.S === 'OUTBOX',
  );

  expect(outboxModifies.length).toBeGreaterThan(0);
  expect(outboxModifies.every((r) => r.dynamodb?.NewImage?.dispatchedAt !== undefined)).toBe(true);
  expect(outboxModifies.every((r) => r.dynamodb?.NewImage?.pendingShard === undefined)).toBe(true);
  expect(outboxModifies.filter((r) => pipeline.passesRelayFilter(r))).toEqual([]); // the deployed filter drops the dispatch mark
  expect(relayed.event.Records.length).toBeGreaterThan(0); // while it passed the outbox INSERT
  // Drain what the relay published (tests select their own messages by body; this keeps the queues short).
  for (const consumer of [STANDARD, FIFO, LEDGER])
    await pipeline.deliver(consumer, await pipeline.receive(consumer, 1, event.entityId));
});

test('a producer resend with a new messageId is applied once, and reaches the provider once', async () => {
  const event = thingHappened(uniqueThing('resend'));
  const queueUrl = pipeline.queueOf(STANDARD).queueUrl;
  await pipeline.send(queueUrl, JSON.stringify(event));
  await pipeline.send(queueUrl, JSON.stringify(event));
  const [first, resent] = (await pipeline.receive(STANDARD, 2, event.eventId)).Records;

  await pipeline.deliver(STANDARD, { Records: [first] } as SQSEvent);
  await pipeline.deliver(STANDARD, { Records: [resent] } as SQSEvent);

  expect(first.messageId).not.toBe(resent.messageId);
  expect(await appliedCount(STANDARD, event.entityId)).toBe(1);
  // The first delivery recorded the call done on its inbox entry: the resend leaves the provider alone.
  expect((await pipeline.providerLog())[`${STANDARD}:${event.eventId}`].calls).toBe(1);
  expect((await pipeline.effects())[`INBOX#${STANDARD}#${event.eventId}`].providerCallDoneAt).toEqual(
    expect.any(String),
  );
});

test('a crash after the transaction but before the ack: the redelivery is suppressed', async () => {
  const event = thingHappened(uniqueThing('crash'));
  await pipeline.sendToFifo(FIFO, event);

  const first = await pipeline.receive(FIFO, 1, event.eventId);
  await pipeline.deliver(FIFO, first, { crashBeforeAck: true });
  await pipeline.makeVisibleAgain(pipeline.queueOf(FIFO).queueUrl, first.Records[0].receiptHandle);
  const redelivery = await pipeline.receive(FIFO, 1, event.eventId);
  const response = await pipeline.deliver(FIFO, redelivery);

  expect(redelivery.Records[0].attributes.ApproximateReceiveCount).toBe('2');
  expect(response.batchItemFailures).toEqual([]);
  expect(await appliedCount(FIFO, event.entityId)).toBe(1);
});

test('two concurrent deliveries of one message: one applied, the other duplicate or transient; redelivered, one effect and one provider call', async () => {
  const event = thingHappened(uniqueThing('concurrent'));
  await pipeline.send(pipeline.queueOf(STANDARD).queueUrl, JSON.stringify(event));
  const batch = await pipeline.receive(STANDARD, 1, event.eventId);

  const responses = await Promise.all([
    pipeline.deliver(STANDARD, batch, { crashBeforeAck: true }),
    pipeline.deliver(STANDARD, batch, { crashBeforeAck: true }),
  ]);
  // DynamoDB may cancel the loser with TransactionConflict, or the loser finds the provider call leased by the
  // winner (both transient, with a backoff of a second or two): the queue redelivers it.
  await pipeline.makeVisibleAgain(pipeline.queueOf(STANDARD).queueUrl, batch.Records[0].receiptHandle);
  const redelivery = await pipeline.deliver(STANDARD, await pipeline.receive(STANDARD, 1, event.eventId));

  expect(responses.filter((r) => r.batchItemFailures.length > 0).length).toBeLessThanOrEqual(1);
  expect(redelivery.batchItemFailures).toEqual([]);
  expect(await appliedCount(STANDARD, event.entityId)).toBe(1);
  // The lease: the copy that lost the claim never called the provider while the winner did.
  expect((await pipeline.providerLog())[`${STANDARD}:${event.eventId}`].calls).toBe(1);
});

test('a poison (permanent) message goes to the DLQ at once with its cause, without burning retries', async () => {
  const poison = `{"this is": "not an event envelope", "n": "${randomUUID()}"}`;
  await pipeline.send(pipeline.queueOf(STANDARD).queueUrl, poison);
  const batch = await pipeline.receive(STANDARD, 1, poison);

  const response = await pipeline.deliver(STANDARD, batch);
  const dlq = await receiveMatching(pipeline.queueOf(STANDARD).deadLetterQueueUrl, 1, poison);

  expect(response.batchItemFailures).toEqual([]);
  expect(dlq.Records).toHaveLength(1);
  const attributes = dlq.Records[0].messageAttributes;
  expect(attributes.failureCause.stringValue).toBe('SchemaViolation');
  expect(attributes.consumer.stringValue).toBe(STANDARD);
  expect(attributes.attempt.stringValue).toBe('1');
  expect(dlq.Records[0].body).toBe(poison);
});

test('a message that keeps failing transiently reaches the DLQ after maxReceiveCount attempts, then a redrive applies it once', async () => {
  const event = thingHappened(uniqueThing('transient'));
  await pipeline.send(pipeline.queueOf(STANDARD).queueUrl, JSON.stringify(event));
  pipeline.dynamoCalls[STANDARD].failWhen = (command) => command === 'TransactWriteItemsCommand';
  // The deployed maxReceiveCount (derived from the retry budget), as the construct gives the queue.
  const { maxReceiveCount } = pipeline.queueOf(STANDARD);

  const failures: number[] = [];
  for (let attempt = 1; attempt <= maxReceiveCount; attempt++) {
    const batch = await pipeline.receive(STANDARD, 1, event.eventId);
    if (batch.Records.length === 0) break;
    failures.push((await pipeline.deliver(STANDARD, batch)).batchItemFailures.length);
  }
  const afterLimit = await pipeline.receive(STANDARD, 1, event.eventId);
  pipeline.dynamoCalls[STANDARD].failWhen = undefined;
  const redriven = await pipeline.redrive(STANDARD, event.eventId);
  await pipeline.deliver(STANDARD, await pipeline.receive(STANDARD, 1, event.eventId));

  expect(failures).toEqual(Array(maxReceiveCount).fill(1));
  expect(afterLimit.Records).toHaveLength(0);
  expect(redriven).toBe(1);
  expect(await appliedCount(STANDARD, event.entityId)).toBe(1);
});

test('redriving a DLQ copy of an applied message (receive, send, delete) makes no second effect', async () => {
  const event = thingHappened(uniqueThing('redrive'));
  await pipeline.send(pipeline.queueOf(STANDARD).queueUrl, JSON.stringify(event));
  await pipeline.deliver(STANDARD, await pipeline.receive(STANDARD, 1, event.eventId));
  // The same event also sits in the DLQ.
  await pipeline.send(pipeline.queueOf(STANDARD).deadLetterQueueUrl, JSON.stringify(event));

  const redriven = await pipeline.redrive(STANDARD, event.eventId);
  const response = await pipeline.deliver(STANDARD, await pipeline.receive(STANDARD, 1, event.eventId));

  expect(redriven).toBe(1);
  expect(response.batchItemFailures).toEqual([]);
  expect(await appliedCount(STANDARD, event.entityId)).toBe(1);
});

test('a relay crash after publishing, then its retry: consumers still apply once', async () => {
  const event = await recordHappened();
  const records = await pipeline.stream.next();

  await pipeline.relay(records, lambdaContext()); // published, then "crashed" before Lambda checkpointed
  await pipeline.relay(records, lambdaContext()); // Lambda retries the same records
  const standardBatch = await pipeline.receive(STANDARD, 2, event.entityId);
  await pipeline.deliver(STANDARD, standardBatch);
  await pipeline.deliver(FIFO, await pipeline.receive(FIFO, 1, event.entityId));
  const fifoAfter = await pipeline.receive(FIFO, 1, event.entityId);
  await pipeline.deliver(LEDGER, await pipeline.receive(LEDGER, 1, event.entityId));

  expect(standardBatch.Records).toHaveLength(2); // the standard queue got the event twice
  expect(fifoAfter.Records).toHaveLength(0); // the FIFO queue deduplicated the resend by eventId
  expect(await appliedCount(STANDARD, event.entityId)).toBe(1);
  expect(await appliedCount(FIFO, event.entityId)).toBe(1);
});

test('a duplicate after the provider call failed (the effect committed) calls the provider once more; later copies do not', async () => {
  const event = thingHappened(uniqueThing('providerdown'));
  const queueUrl = pipeline.queueOf(STANDARD).queueUrl;
  await pipeline.send(queueUrl, JSON.stringify(event));
  await pipeline.send(queueUrl, JSON.stringify(event)); // a later copy (a resend)
  // The provider write (UpdateItem on the provider log) fails: the provider is down after our commit.
  pipeline.dynamoCalls[STANDARD].failWhen = (command, input) =>
    command === 'UpdateItemCommand' && input.TableName === pipeline.tables.names.ProviderLog;

  const failed = await pipeline.deliver(STANDARD, await pipeline.receive(STANDARD, 1, event.eventId));
  pipeline.dynamoCalls[STANDARD].failWhen = undefined;
  const inboxAfterFailure = (await pipeline.effects())[`INBOX#${STANDARD}#${event.eventId}`];
  // The failed message comes back at once (backoff 0 here); then the other copy. Either order.
  await pipeline.deliver(STANDARD, await pipeline.receive(STANDARD, 1, event.eventId));
  const callsAfterRetry = (await pipeline.providerLog())[`${STANDARD}:${event.eventId}`]?.calls;
  await pipeline.deliver(STANDARD, await pipeline.receive(STANDARD, 1, event.eventId));
  const leftOver = await receiveMatching(queueUrl, 1, event.eventId, 500);

  expect(failed.batchItemFailures).toHaveLength(1);
  expect(inboxAfterFailure.providerCallDoneAt).toBeUndefined();
  expect(callsAfterRetry).toBe(1);
  expect(leftOver.Records).toHaveLength(0);
  expect((await pipeline.providerLog())[`${STANDARD}:${event.eventId}`].calls).toBe(1);
  expect(await appliedCount(STANDARD, event.entityId)).toBe(1);
});

test('the provider down until ThingHappened dead-letters, then ThingUndone goes through: the redriven ThingHappened calls no provider', async () => {
  const thing = uniqueThing('callafterundo');
  const happened = thingHappened(thing);
  const undone = thingUndone(thing);
  await pipeline.sendToFifo(LEDGER, happened);
  // The provider is down: its log write fails (the consumer's own try counter still works).
  pipeline.dynamoCalls[LEDGER].failWhen = (command, input) =>
    command === 'UpdateItemCommand' && input.TableName === pipeline.tables.names.ProviderLog;

  // Until the FIFO consumer spends its try budget and dead-letters ThingHappened itself.
  for (let attempt = 1; attempt <= 30; attempt++) {
    const batch = await pipeline.receive(LEDGER, 1, thing);
    if (batch.Records.length === 0) break;
    await pipeline.deliver(LEDGER, batch);
  }
  pipeline.dynamoCalls[LEDGER].failWhen = undefined;
  await pipeline.sendToFifo(LEDGER, undone);
  const undoResponse = await pipeline.deliver(LEDGER, await pipeline.receive(LEDGER, 1, thing));
  const redriven = await pipeline.redrive(LEDGER, thing);
  const redriveResponse = await pipeline.deliver(LEDGER, await pipeline.receive(LEDGER, 1, thing));

  expect(undoResponse.batchItemFailures).toEqual([]);
  expect(redriven).toBe(1);
  expect(redriveResponse.batchItemFailures).toEqual([]);
  const log = await pipeline.providerLog();
  expect(log[`${LEDGER}:${undone.eventId}`].calls).toBe(1);
  expect(log[`${LEDGER}:${happened.eventId}`]).toBeUndefined(); // no call for it, before or after the undo's
  const effects = await pipeline.effects();
  expect(effects[probeTallyKey(thing).pk].tally).toBe(0);
  expect(effects[probeStateKey(thing).pk]).toMatchObject({ version: 2, state: 'UNDONE' });
  expect(effects[`INBOX#${LEDGER}#${happened.eventId}`].supersededBy).toBe(undone.eventId);
});

test('DynamoDB calls per consumed message: first delivery and duplicate', async () => {
  const event = thingHappened(uniqueThing('callcount'));
  await pipeline.send(pipeline.queueOf(STANDARD).queueUrl, JSON.stringify(event));
  await pipeline.send(pipeline.queueOf(STANDARD).queueUrl, JSON.stringify(event));
  const [first, duplicate] = (await pipeline.receive(STANDARD, 2, event.eventId)).Records;

  await pipeline.deliver(STANDARD, { Records: [first] } as SQSEvent);
  const firstCalls = pipeline.dynamoCalls[STANDARD].calls.splice(0);
  await pipeline.deliver(STANDARD, { Records: [duplicate] } as SQSEvent);
  const duplicateCalls = pipeline.dynamoCalls[STANDARD].calls.splice(0);

  // First: claim + effect in one transaction, the provider call (a write here, the recording stand-in),
  // then the call recorded done on the inbox entry. Duplicate: the failed claim returns that entry
  // (ALL_OLD), which says done: no read, no provider call, nothing else.
  expect(firstCalls).toEqual(['TransactWriteItemsCommand', 'UpdateItemCommand', 'UpdateItemCommand']);
  expect(duplicateCalls).toEqual(['TransactWriteItemsCommand']);
});
