import { SendMessageBatchCommand, SQSClient, type SendMessageBatchCommandInput } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { SENDS_IN_FLIGHT, SqsEventPublisher } from '@exactly-once/runtime/aws/sqs-event-publisher';
import type { EventEnvelope } from '@exactly-once/runtime/envelope';
import type { ConsumerRoute } from '@exactly-once/runtime/outbox/routes';
import type { OutboxStore } from '@exactly-once/runtime/outbox/ports';
import { relayOutboxEvents } from '@exactly-once/runtime/outbox/relay';
import { logger } from '@exactly-once/runtime/runtime/observability';
import { acceptEntries } from '../support/mocked-sdk';
import { thingHappened as happened, thingUndone as undone } from '../exactly-once/fixtures/probe-events';

/**
 * The relay's chunks of 10 go out side by side, at most SENDS_IN_FLIGHT calls at once, and what it
 * marks dispatched is still exactly what SQS took: a failed chunk's events are reported, never marked.
 */

const FIFO_URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/probe-fifo.fifo';
const STANDARD_URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/probe';
const ROUTES: ConsumerRoute[] = [
  { consumer: 'probe-fifo', queueUrl: FIFO_URL, fifo: true, eventTypes: ['ThingHappened', 'ThingUndone'] },
  { consumer: 'probe', queueUrl: STANDARD_URL, fifo: false, eventTypes: ['ThingHappened'] },
];

const sqs = mockClient(SQSClient);
const client = new SQSClient({ region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });

/** A SendMessageBatch that answers a turn of the event loop later, counting the calls in flight. */
function slowSqs(answer: (input: SendMessageBatchCommandInput) => unknown = acceptEntries()) {
  const seen = { inFlight: 0, most: 0, log: [] as string[] };
  sqs.on(SendMessageBatchCommand).callsFake(async (input: SendMessageBatchCommandInput) => {
    const first = input.Entries?.[0]?.MessageAttributes?.eventId?.StringValue ?? '?';
    seen.inFlight += 1;
    seen.most = Math.max(seen.most, seen.inFlight);
    seen.log.push(`start ${first}`);
    await new Promise((resolve) => setImmediate(resolve));
    seen.inFlight -= 1;
    seen.log.push(`end ${first}`);
    return answer(input);
  });
  return seen;
}

function recordingOutbox() {
  const marked: string[] = [];
  const outbox = {
    markDispatched: async (event: EventEnvelope) => {
      marked.push(event.eventId);
      return true;
    },
  } as unknown as OutboxStore;
  return { outbox, marked };
}

beforeEach(() => {
  sqs.reset();
  jest.spyOn(logger, 'warn').mockImplementation(() => undefined);
});
afterEach(() => jest.restoreAllMocks());

test(`a relay batch of 100 events to two routes (20 chunks): at most ${SENDS_IN_FLIGHT} calls in flight, more than one at once, every event sent once per route`, async () => {
  const events = Array.from({ length: 100 }, (_, i) => happened(`thing-${String(i).padStart(3, '0')}`));
  const seen = slowSqs();

  const failed = await new SqsEventPublisher(client, ROUTES).publish(events);

  expect(failed).toEqual(new Set());
  expect(seen.most).toBe(SENDS_IN_FLIGHT);
  const sent = (url: string) =>
    sqs
      .commandCalls(SendMessageBatchCommand)
      .filter((c) => c.args[0].input.QueueUrl === url)
      .flatMap((c) => c.args[0].input.Entries ?? [])
      .map((e) => e.MessageAttributes?.eventId?.StringValue);
  expect(sent(FIFO_URL).sort()).toEqual(events.map((e) => e.eventId));
  expect(sent(STANDARD_URL).sort()).toEqual(events.map((e) => e.eventId));
});

test('one chunk failing while the others are in flight: exactly its 10 events are reported, the other 40 are marked dispatched', async () => {
  const events = Array.from({ length: 50 }, (_, i) => undone(`thing-${String(i).padStart(2, '0')}`));
  const failing = new Set(events.slice(20, 30).map((e) => e.eventId));
  slowSqs((input) => {
    if (failing.has(String(input.Entries?.[0]?.MessageAttributes?.eventId?.StringValue)))
      throw Object.assign(new Error('Service unavailable'), { name: 'ServiceUnavailable' });
    return acceptEntries()(input);
  });
  const { outbox, marked } = recordingOutbox();

  const failed = await relayOutboxEvents(events, {
    publisher: new SqsEventPublisher(client, ROUTES),
    outbox,
    now: () => new Date(),
  });

  expect(failed).toEqual(failing);
  expect(marked.sort()).toEqual(events.filter((e) => !failing.has(e.eventId)).map((e) => e.eventId));
});

test("on a FIFO route a chunk sharing a message group with an earlier chunk waits for that chunk's call to end, and the group stays in order", async () => {
  // 12 events of thing-a (chunks 1 and 2 share it), then 10 of other entities (chunk 3).
  const sameEntity = Array.from({ length: 12 }, (_, i) =>
    happened('thing-a', { eventId: `thing-a:${String(i).padStart(2, '0')}`, version: i + 1 }),
  );
  const others = Array.from({ length: 8 }, (_, i) => undone(`thing-${i}`));
  const seen = slowSqs();

  await new SqsEventPublisher(client, [ROUTES[0]]).publish([...sameEntity, ...others]);

  // Chunk 2 (thing-a:10, thing-a:11 and the others) starts only after chunk 1 (thing-a:00..09) ended.
  expect(seen.log.indexOf('start thing-a:10')).toBeGreaterThan(seen.log.indexOf('end thing-a:00'));
  const fifo = sqs.commandCalls(SendMessageBatchCommand).flatMap((c) => c.args[0].input.Entries ?? []);
  expect(
    fifo.filter((e) => e.MessageGroupId === 'thing-a').map((e) => e.MessageAttributes?.eventId?.StringValue),
  ).toEqual(sameEntity.map((e) => e.eventId));
});

test('on a FIFO route chunks of different message groups go side by side', async () => {
  const events = Array.from({ length: 30 }, (_, i) => undone(`thing-${String(i).padStart(2, '0')}`));
  const seen = slowSqs();

  await new SqsEventPublisher(client, [ROUTES[0]]).publish(events);

  expect(seen.most).toBe(3);
});
