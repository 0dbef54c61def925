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

/**
 * The mechanism on its own: a consumer built only from lambdas/exactly-once's public surface
 * (fixtures/probe-consumer.ts), the SDK mocked, and a small Effects table that enforces the inbox
 * claim's condition as DynamoDB does. No application code is loaded, so these tests also run in
 * a copy of the repository with the example deleted (mechanism-alone.test.ts).
 */
const EFFECT_ITEMS = `EFFECT#${PROBE_SPEC.name}#`;
const TAKEN = PROBE_SPEC.eventTypes[0];
let h: GeneratedConsumer;

beforeAll(async () => {
  h = await loadGeneratedConsumer(PROBE_SPEC, () => import('./fixtures/probe-consumer'));
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
