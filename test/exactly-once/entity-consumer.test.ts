import {
  deadLettered,
  deliver,
  envelope,
  loadGeneratedConsumer,
  providerKeys,
  recordOf,
  resetGeneratedConsumer,
  type GeneratedConsumer,
} from '../support/generated-consumers';
import { PROBE_SPEC } from './fixtures/probe-spec';
import { TEST_DEDUPE } from '../support/dedupe';

/**
 * The mechanism on its own: a consumer built only from packages/runtime/src's public surface
 * (fixtures/probe-consumer.ts), the SDK mocked, and a small Effects table that enforces the inbox
 * claim's condition as DynamoDB does. No application code is loaded, so these tests also run in
 * a copy of the repository with the example deleted (mechanism-alone.test.ts).
 */
const EFFECT_ITEMS = `EFFECT#${PROBE_SPEC.name}#`;
const TAKEN = PROBE_SPEC.eventTypes[0];
let h: GeneratedConsumer;

beforeAll(async () => {
  h = await loadGeneratedConsumer(PROBE_SPEC, () => import('./fixtures/handlers/probe-consumer'));
});

beforeEach(() => resetGeneratedConsumer(h));

test('the same event delivered twice is applied once and reaches the provider once, under <consumer>:<eventId>', async () => {
  const event = envelope(TAKEN, 'thing-1');

  const first = await deliver(h, recordOf(h, event));
  const second = await deliver(h, recordOf(h, event));

  expect([first.batchItemFailures, second.batchItemFailures]).toEqual([[], []]);
  expect(h.table.itemsStartingWith(EFFECT_ITEMS)).toEqual([
    expect.objectContaining({ entityId: 'thing-1', appliedCount: 1, lastEventId: event.eventId }),
  ]);
  expect(providerKeys(h)).toEqual([`probe:${event.eventId}`]);
});

test('a second copy in the same batch is applied nothing and waits: the first copy holds the provider call', async () => {
  const event = envelope(TAKEN, 'thing-2');
  const [first, second] = [recordOf(h, event), recordOf(h, event)];

  const response = await deliver(h, first, second);

  // The copy that lost the claim owes the call but finds it leased: it is retried later, not called twice.
  expect(response.batchItemFailures).toEqual([{ itemIdentifier: second.messageId }]);
  expect(h.table.itemsStartingWith(EFFECT_ITEMS)).toEqual([expect.objectContaining({ appliedCount: 1 })]);
  expect(providerKeys(h)).toEqual([`probe:${event.eventId}`]);
});

test('a provider call that fails fails only its record, and its effect stays applied once', async () => {
  const [failing, other] = [envelope(TAKEN, 'thing-3'), envelope(TAKEN, 'thing-4')];
  h.doc
    .on(h.docSdk.UpdateCommand, { TableName: 'provider-log', Key: { idempotencyKey: `probe:${failing.eventId}` } })
    .rejects(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
  const records = [recordOf(h, failing), recordOf(h, other)];

  const response = await deliver(h, ...records);

  expect(response.batchItemFailures).toEqual([{ itemIdentifier: records[0].messageId }]);
  expect(h.table.itemsStartingWith(EFFECT_ITEMS)).toEqual([
    expect.objectContaining({ entityId: 'thing-3', appliedCount: 1 }),
    expect.objectContaining({ entityId: 'thing-4', appliedCount: 1 }),
  ]);
});

test.each([
  ['an event type it does not take', 'UnsupportedEventType', JSON.stringify(envelope('NotTaken', 'thing-4'))],
  ['a body that is not an event envelope', 'SchemaViolation', JSON.stringify({ hello: 'world' })],
])('%s goes to the DLQ with cause %s, is acked, and changes nothing', async (_what, cause, body) => {
  const response = await deliver(h, recordOf(h, body));

  expect(response.batchItemFailures).toEqual([]);
  expect(deadLettered(h)).toEqual([
    expect.objectContaining({
      QueueUrl: h.deadLetterQueueUrl,
      MessageBody: body,
      MessageAttributes: expect.objectContaining({
        failureCause: { DataType: 'String', StringValue: cause },
        consumer: { DataType: 'String', StringValue: 'probe' },
      }),
    }),
  ]);
  expect(h.table.items.size).toBe(0);
  expect(providerKeys(h)).toEqual([]);
});

describe('event integrity: only the same event under an id is a duplicate', () => {
  test('another event under a reused eventId is not acknowledged as a duplicate: DLQ EventIdReused with both fingerprints; nothing applied again, no second call', async () => {
    const first = envelope(TAKEN, 'thing-5', 'reused-id');
    const reused = { ...first, entityId: 'thing-6', payload: { amountCents: 100 } };
    await deliver(h, recordOf(h, first));
    const stored = h.table.items.get('INBOX#probe#reused-id');

    const response = await deliver(h, recordOf(h, reused));

    expect(response.batchItemFailures).toEqual([]);
    expect(deadLettered(h)).toEqual([
      expect.objectContaining({
        MessageAttributes: expect.objectContaining({
          failureCause: { DataType: 'String', StringValue: 'EventIdReused' },
          storedFingerprint: { DataType: 'String', StringValue: stored?.fingerprint },
          deliveredFingerprint: {
            DataType: 'String',
            StringValue: expect.not.stringMatching(String(stored?.fingerprint)),
          },
        }),
      }),
    ]);
    expect(h.table.itemsStartingWith(EFFECT_ITEMS)).toEqual([
      expect.objectContaining({ entityId: 'thing-5', appliedCount: 1 }),
    ]);
    expect(providerKeys(h)).toEqual(['probe:reused-id']);
    expect(h.table.items.get('INBOX#probe#reused-id')).toEqual(stored);
  });

  test('the same event with a rewritten occurredAt (the DLQ tool redrives past the horizon so) is still a duplicate', async () => {
    const event = envelope(TAKEN, 'thing-7');
    await deliver(h, recordOf(h, event));

    const response = await deliver(h, recordOf(h, { ...event, occurredAt: new Date().toISOString() }));

    expect(response.batchItemFailures).toEqual([]);
    expect(deadLettered(h)).toEqual([]);
    expect(h.table.itemsStartingWith(EFFECT_ITEMS)).toEqual([expect.objectContaining({ appliedCount: 1 })]);
  });

  test('a claim written before fingerprints were stored still makes its event a duplicate', async () => {
    const event = envelope(TAKEN, 'thing-8');
    h.table.put({
      pk: `INBOX#probe#${event.eventId}`,
      sk: 'INBOX',
      consumer: 'probe',
      eventId: event.eventId,
      claimedAt: new Date().toISOString(),
      providerCallDoneAt: new Date().toISOString(),
    });

    const response = await deliver(h, recordOf(h, event));

    expect(response.batchItemFailures).toEqual([]);
    expect(deadLettered(h)).toEqual([]);
    expect(h.table.itemsStartingWith(EFFECT_ITEMS)).toEqual([]);
    expect(providerKeys(h)).toEqual([]);
  });
});

describe('time cannot outlive a claim', () => {
  test('an event stamped 10 minutes ahead of the consumer clock goes to the DLQ as OccurredInFuture: nothing claimed, no call', async () => {
    const event = { ...envelope(TAKEN, 'thing-9'), occurredAt: new Date(Date.now() + 600_000).toISOString() };

    const response = await deliver(h, recordOf(h, event));

    expect(response.batchItemFailures).toEqual([]);
    expect(deadLettered(h)).toEqual([
      expect.objectContaining({
        MessageAttributes: expect.objectContaining({
          failureCause: { DataType: 'String', StringValue: 'OccurredInFuture' },
        }),
      }),
    ]);
    expect(h.table.items.size).toBe(0);
    expect(providerKeys(h)).toEqual([]);
  });

  test('an event stamped 2 minutes ahead (within the skew margin) is applied, and its claim expires the TTL after its occurredAt', async () => {
    const occurredAt = Date.now() + 120_000;
    const event = { ...envelope(TAKEN, 'thing-10'), occurredAt: new Date(occurredAt).toISOString() };

    const response = await deliver(h, recordOf(h, event));

    expect(response.batchItemFailures).toEqual([]);
    expect(h.table.itemsStartingWith(EFFECT_ITEMS)).toEqual([expect.objectContaining({ appliedCount: 1 })]);
    expect(h.table.items.get(`INBOX#probe#${event.eventId}`)?.expiresAt).toBe(
      Math.floor(occurredAt / 1000) + TEST_DEDUPE.claimTtlSeconds,
    );
  });
});

test('an older version of an entity after a newer one is stale: not counted, no provider call', async () => {
  const newer = { ...envelope(TAKEN, 'thing-11', 'thing-11.v2'), version: 2 };
  const older = { ...envelope(TAKEN, 'thing-11', 'thing-11.v1'), version: 1 };

  await deliver(h, recordOf(h, newer));
  const response = await deliver(h, recordOf(h, older));

  expect(response.batchItemFailures).toEqual([]);
  expect(h.table.itemsStartingWith(EFFECT_ITEMS)).toEqual([
    expect.objectContaining({ appliedCount: 1, lastEventId: 'thing-11.v2', lastVersion: 2 }),
  ]);
  expect(providerKeys(h)).toEqual(['probe:thing-11.v2']);
});

test('a write DynamoDB refuses as invalid goes to the DLQ at once as WriteRejected, not through 14 tries', async () => {
  h.doc.on(h.docSdk.TransactWriteCommand).rejects(
    Object.assign(new Error('One or more parameter values were invalid: key too long'), {
      name: 'ValidationException',
      $fault: 'client',
    }),
  );
  const record = recordOf(h, envelope(TAKEN, 'thing-12'));

  const response = await deliver(h, record);

  expect(response.batchItemFailures).toEqual([]);
  expect(deadLettered(h)).toEqual([
    expect.objectContaining({
      MessageAttributes: expect.objectContaining({
        failureCause: { DataType: 'String', StringValue: 'WriteRejected' },
      }),
    }),
  ]);
  expect(providerKeys(h)).toEqual([]);
});
