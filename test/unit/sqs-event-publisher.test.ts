import {
  SendMessageBatchCommand,
  SQSClient,
  type SendMessageBatchCommandInput,
  type SendMessageBatchRequestEntry,
} from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { SqsEventPublisher } from '../../lambdas/exactly-once/aws/sqs-event-publisher';
import type { EventEnvelope } from '../../lambdas/exactly-once/envelope';
import type { ConsumerRoute } from '../../lambdas/exactly-once/outbox/routes';
import { logger } from '../../lambdas/exactly-once/runtime/observability';
import { acceptEntries } from '../support/mocked-sdk';
import { cancelledEvent as cancelled, placedEvent as placed } from '../support/orders';

/**
 * The publisher's routing on its own, SQS mocked at the SDK: each event goes
 * to every route whose event types include its type, and nowhere else.
 */

const FULFILMENT_URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/fulfilment.fifo';
const LOYALTY_URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/loyalty';
const AUDIT_URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/audit';

const ROUTES: ConsumerRoute[] = [
  { consumer: 'fulfilment', queueUrl: FULFILMENT_URL, fifo: true, eventTypes: ['OrderPlaced', 'OrderCancelled'] },
  { consumer: 'loyalty', queueUrl: LOYALTY_URL, fifo: false, eventTypes: ['OrderPlaced'] },
  // A third consumer, as `npm run new:consumer` adds one: nothing in the publisher names it.
  { consumer: 'audit', queueUrl: AUDIT_URL, fifo: false, eventTypes: ['OrderPlaced'] },
];

const sqs = mockClient(SQSClient);
const client = new SQSClient({ region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });

const sentTo = (queueUrl: string): SendMessageBatchRequestEntry[] =>
  sqs
    .commandCalls(SendMessageBatchCommand)
    .map((c) => c.args[0].input)
    .filter((input) => input.QueueUrl === queueUrl)
    .flatMap((input) => input.Entries ?? []);
const bodiesSentTo = (queueUrl: string) => sentTo(queueUrl).map((e) => JSON.parse(String(e.MessageBody)) as unknown);

beforeEach(() => {
  sqs.reset();
  sqs.on(SendMessageBatchCommand).callsFake(acceptEntries());
});

afterEach(() => jest.restoreAllMocks());

test('each event goes to every route that takes its type: a third route taking OrderPlaced gets it, routes not taking OrderCancelled do not', async () => {
  const events = [placed('ord-1'), cancelled('ord-1')];

  const failed = await new SqsEventPublisher(client, ROUTES).publish(events);

  expect([...failed]).toEqual([]);
  expect(bodiesSentTo(FULFILMENT_URL)).toEqual(events);
  expect(bodiesSentTo(LOYALTY_URL)).toEqual([events[0]]);
  expect(bodiesSentTo(AUDIT_URL)).toEqual([events[0]]);
});

test('on a FIFO route the group is the entityId and the dedup id the eventId; a standard route sets neither', async () => {
  // An entity id unlike its event ids, so neither can stand in for the other.
  const event: EventEnvelope = { ...placed('ord-1'), entityId: 'entity-7' };

  await new SqsEventPublisher(client, ROUTES).publish([event]);

  expect(sentTo(FULFILMENT_URL).map((e) => [e.MessageGroupId, e.MessageDeduplicationId])).toEqual([
    ['entity-7', 'ord-1.placed'],
  ]);
  expect(sentTo(LOYALTY_URL).map((e) => [e.MessageGroupId, e.MessageDeduplicationId])).toEqual([
    [undefined, undefined],
  ]);
  expect(sentTo(LOYALTY_URL)[0].MessageAttributes).toEqual({
    eventId: { DataType: 'String', StringValue: 'ord-1.placed' },
    type: { DataType: 'String', StringValue: 'OrderPlaced' },
    traceparent: { DataType: 'String', StringValue: expect.stringMatching(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/) },
  });
});

test('the deduplicationId option sets the FIFO dedup id (the resend fault), and only that', async () => {
  const publisher = new SqsEventPublisher(client, ROUTES, { deduplicationId: (e) => `${e.eventId}.resend` });

  await publisher.publish([placed('ord-1')]);

  expect(sentTo(FULFILMENT_URL).map((e) => [e.MessageGroupId, e.MessageDeduplicationId])).toEqual([
    ['ord-1', 'ord-1.placed.resend'],
  ]);
});

test('an event is failed if any one of its destinations failed, though the others took it', async () => {
  sqs
    .on(SendMessageBatchCommand)
    .callsFake(
      acceptEntries(
        (queueUrl, entry) => queueUrl === AUDIT_URL && entry.MessageAttributes?.eventId?.StringValue === 'ord-2.placed',
      ),
    );
  const events = [placed('ord-1'), placed('ord-2'), cancelled('ord-3')];

  const failed = await new SqsEventPublisher(client, ROUTES).publish(events);

  expect([...failed]).toEqual(['ord-2.placed']);
  expect(bodiesSentTo(LOYALTY_URL)).toEqual([events[0], events[1]]);
});

test('an event of a type no route takes is sent nowhere, logged, and not failed (it would block the outbox for good)', async () => {
  const warn = jest.spyOn(logger, 'warn');
  const shipped = { ...placed('ord-1'), eventId: 'ord-1.shipped', type: 'OrderShipped' };

  const failed = await new SqsEventPublisher(client, ROUTES).publish([shipped, cancelled('ord-2')]);

  expect([...failed]).toEqual([]);
  expect(sqs.commandCalls(SendMessageBatchCommand).map((c) => c.args[0].input.QueueUrl)).toEqual([FULFILMENT_URL]);
  expect(sentTo(FULFILMENT_URL).map((e) => e.MessageAttributes?.eventId?.StringValue)).toEqual(['ord-2.cancelled']);
  expect(warn).toHaveBeenCalledWith(expect.stringMatching(/no consumer takes/i), {
    events: [{ eventId: 'ord-1.shipped', type: 'OrderShipped' }],
  });
});

describe('batch entry ids are positions in the chunk, never derived from event ids', () => {
  /**
   * SendMessageBatch as SQS checks it: an entry id outside 1-80 characters of [A-Za-z0-9_-], or two
   * equal ids in one call, fail the whole call (every entry of the chunk, on every retry).
   */
  function sqsCheckingIds(fail: (entry: SendMessageBatchRequestEntry) => boolean = () => false) {
    return (input: SendMessageBatchCommandInput) => {
      const entries = input.Entries ?? [];
      const ids = entries.map((e) => String(e.Id));
      if (ids.some((id) => !/^[A-Za-z0-9_-]{1,80}$/.test(id)))
        throw Object.assign(new Error('A batch entry id can only contain [A-Za-z0-9_-], 1-80 characters'), {
          name: 'InvalidBatchEntryId',
        });
      if (new Set(ids).size !== ids.length)
        throw Object.assign(new Error('Two or more batch entries have the same Id'), {
          name: 'BatchEntryIdsNotDistinct',
        });
      return acceptEntries((_queueUrl, entry) => fail(entry))(input);
    };
  }
  const withId = (eventId: string): EventEnvelope => ({ ...cancelled('ord-1'), eventId });
  const eventIdOf = (entry: SendMessageBatchRequestEntry) => entry.MessageAttributes?.eventId?.StringValue;

  test('an event id over 80 characters and two ids equal once punctuation is replaced (a.1, a:1) publish, with the nine beside them', async () => {
    sqs.on(SendMessageBatchCommand).callsFake(sqsCheckingIds());
    // 128 printable characters: a valid event id (a FIFO dedup id), not a valid batch entry id.
    const long = withId(`ord-1.${'x'.repeat(122)}`);
    const events = [long, withId('a.1'), withId('a:1'), ...Array.from({ length: 7 }, (_, i) => withId(`ord-${i}`))];

    const failed = await new SqsEventPublisher(client, ROUTES).publish(events);

    expect([...failed]).toEqual([]);
    expect(sentTo(FULFILMENT_URL).map(eventIdOf)).toEqual(events.map((e) => e.eventId));
    expect(sentTo(FULFILMENT_URL).map((e) => e.Id)).toEqual(events.map((_, i) => String(i)));
  });

  test('a failed entry is mapped back to its event by position, chunk by chunk (ids restart at 0 in each chunk of 10)', async () => {
    // The 12th event (position 1 of the second chunk) fails; its entry id, "1", is also the 2nd event's.
    sqs.on(SendMessageBatchCommand).callsFake(sqsCheckingIds((entry) => eventIdOf(entry) === 'ord-11.cancelled'));
    const events = Array.from({ length: 12 }, (_, i) => cancelled(`ord-${i}`));

    const failed = await new SqsEventPublisher(client, ROUTES).publish(events);

    expect([...failed]).toEqual(['ord-11.cancelled']);
    const calls = sqs.commandCalls(SendMessageBatchCommand).map((c) => c.args[0].input.Entries ?? []);
    expect(calls.map((entries) => entries.map((e) => e.Id))).toEqual([
      ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9'],
      ['0', '1'],
    ]);
  });
});
