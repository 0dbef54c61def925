import {
  SendMessageBatchCommand,
  SQSClient,
  type SendMessageBatchCommandInput,
  type SendMessageBatchRequestEntry,
} from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { SqsEventPublisher } from '@exactly-once/runtime/aws/sqs-event-publisher';
import type { EventEnvelope } from '@exactly-once/runtime/envelope';
import { tenantDigest } from '@exactly-once/runtime/inbox/keys';
import type { ConsumerRoute } from '@exactly-once/runtime/outbox/routes';
import { logger } from '@exactly-once/runtime/runtime/observability';
import { acceptEntries } from '../support/mocked-sdk';
import { thingHappened as happened, thingUndone as undone } from '../exactly-once/fixtures/probe-events';

/**
 * The publisher's routing on its own, SQS mocked at the SDK: each event goes
 * to every route whose event types include its type, and nowhere else.
 */

const FIFO_URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/probe-fifo.fifo';
const STANDARD_URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/probe';
const AUDIT_URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/audit';

const ROUTES: ConsumerRoute[] = [
  { consumer: 'probe-fifo', queueUrl: FIFO_URL, fifo: true, eventTypes: ['ThingHappened', 'ThingUndone'] },
  { consumer: 'probe', queueUrl: STANDARD_URL, fifo: false, eventTypes: ['ThingHappened'] },
  // A third consumer, as `npm run new:consumer` adds one: nothing in the publisher names it.
  { consumer: 'audit', queueUrl: AUDIT_URL, fifo: false, eventTypes: ['ThingHappened'] },
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

test('each event goes to every route that takes its type: a third route taking ThingHappened gets it, routes not taking ThingUndone do not', async () => {
  const events = [happened('thing-1'), undone('thing-1')];

  const failed = await new SqsEventPublisher(client, ROUTES).publish(events);

  expect([...failed]).toEqual([]);
  expect(bodiesSentTo(FIFO_URL)).toEqual(events);
  expect(bodiesSentTo(STANDARD_URL)).toEqual([events[0]]);
  expect(bodiesSentTo(AUDIT_URL)).toEqual([events[0]]);
});

test('on a FIFO route the group is the entityId and the dedup id the eventId; a standard route sets neither for an event without a tenant', async () => {
  // An entity id unlike its event ids, so neither can stand in for the other.
  const event: EventEnvelope = { ...happened('thing-1'), entityId: 'entity-7' };

  await new SqsEventPublisher(client, ROUTES).publish([event]);

  expect(sentTo(FIFO_URL).map((e) => [e.MessageGroupId, e.MessageDeduplicationId])).toEqual([
    ['entity-7', 'thing-1:happened'],
  ]);
  expect(sentTo(STANDARD_URL).map((e) => [e.MessageGroupId, e.MessageDeduplicationId])).toEqual([
    [undefined, undefined],
  ]);
  expect(sentTo(STANDARD_URL)[0].MessageAttributes).toEqual({
    eventId: { DataType: 'String', StringValue: 'thing-1:happened' },
    type: { DataType: 'String', StringValue: 'ThingHappened' },
    traceparent: { DataType: 'String', StringValue: expect.stringMatching(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/) },
  });
});

test("a route ordered by ordering key groups by the envelope's orderingKey (its entityId without one); a route ordered by entity ignores it", async () => {
  const byKeyUrl = 'https://sqs.us-east-1.amazonaws.com/123456789012/ledger.fifo';
  const routes: ConsumerRoute[] = [
    ...ROUTES,
    { consumer: 'ledger', queueUrl: byKeyUrl, fifo: true, eventTypes: ['ThingHappened'], orderBy: 'ordering-key' },
  ];
  // Two things of one account, and one event without an ordering key.
  const events: EventEnvelope[] = [
    { ...happened('thing-1'), orderingKey: 'account-7' },
    { ...happened('thing-2'), orderingKey: 'account-7' },
    happened('thing-3'),
  ];

  await new SqsEventPublisher(client, routes).publish(events);

  expect(sentTo(byKeyUrl).map((e) => e.MessageGroupId)).toEqual(['account-7', 'account-7', 'thing-3']);
  expect(sentTo(FIFO_URL).map((e) => e.MessageGroupId)).toEqual(['thing-1', 'thing-2', 'thing-3']);
});

test("on a standard route an event with a tenant carries its tenant's digest as the message group (SQS fair queues); the FIFO group stays the entity", async () => {
  const tenant = `arn:aws:sts::123456789012:assumed-role/${'shop-role-'.repeat(120)}`;
  const [first, second] = [
    { ...happened('thing-1'), tenant },
    { ...happened('thing-2'), tenant: 'arn:aws:iam::123456789012:user/other' },
  ];

  await new SqsEventPublisher(client, ROUTES).publish([first, second]);

  const groups = sentTo(STANDARD_URL).map((e) => e.MessageGroupId);
  expect(groups).toEqual([tenantDigest(tenant), tenantDigest(second.tenant)]);
  expect(groups[0]).not.toEqual(groups[1]);
  // SQS takes a group id of at most 128 characters; the tenant here is over 1,200.
  expect(groups.every((g) => /^[A-Za-z0-9_-]{22}$/.test(String(g)))).toBe(true);
  expect(sentTo(STANDARD_URL).map((e) => e.MessageDeduplicationId)).toEqual([undefined, undefined]);
  expect(sentTo(FIFO_URL).map((e) => e.MessageGroupId)).toEqual(['thing-1', 'thing-2']);
});

test('the deduplicationId option sets the FIFO dedup id (the resend fault), and only that', async () => {
  const publisher = new SqsEventPublisher(client, ROUTES, { deduplicationId: (e) => `${e.eventId}.resend` });

  await publisher.publish([happened('thing-1')]);

  expect(sentTo(FIFO_URL).map((e) => [e.MessageGroupId, e.MessageDeduplicationId])).toEqual([
    ['thing-1', 'thing-1:happened.resend'],
  ]);
});

test("the attributes option adds its attributes to every message, beside the event's own (the resend fault marks its copies)", async () => {
  const publisher = new SqsEventPublisher(client, ROUTES, { attributes: { resentByFault: 'true' } });

  await publisher.publish([happened('thing-1')]);

  for (const url of [FIFO_URL, STANDARD_URL, AUDIT_URL])
    expect(sentTo(url)[0].MessageAttributes).toEqual({
      resentByFault: { DataType: 'String', StringValue: 'true' },
      eventId: { DataType: 'String', StringValue: 'thing-1:happened' },
      type: { DataType: 'String', StringValue: 'ThingHappened' },
      traceparent: { DataType: 'String', StringValue: expect.any(String) },
    });
});

test('an event is failed if any one of its destinations failed, though the others took it', async () => {
  sqs
    .on(SendMessageBatchCommand)
    .callsFake(
      acceptEntries(
        (queueUrl, entry) =>
          queueUrl === AUDIT_URL && entry.MessageAttributes?.eventId?.StringValue === 'thing-2:happened',
      ),
    );
  const events = [happened('thing-1'), happened('thing-2'), undone('thing-3')];

  const failed = await new SqsEventPublisher(client, ROUTES).publish(events);

  expect([...failed]).toEqual(['thing-2:happened']);
  expect(bodiesSentTo(STANDARD_URL)).toEqual([events[0], events[1]]);
});

test('an event of a type no route takes is sent nowhere, logged, and not failed (it would block the outbox for good)', async () => {
  const warn = jest.spyOn(logger, 'warn');
  const shipped = { ...happened('thing-1'), eventId: 'thing-1:shipped', type: 'ThingShipped' };

  const failed = await new SqsEventPublisher(client, ROUTES).publish([shipped, undone('thing-2')]);

  expect([...failed]).toEqual([]);
  expect(sqs.commandCalls(SendMessageBatchCommand).map((c) => c.args[0].input.QueueUrl)).toEqual([FIFO_URL]);
  expect(sentTo(FIFO_URL).map((e) => e.MessageAttributes?.eventId?.StringValue)).toEqual(['thing-2:undone']);
  expect(warn).toHaveBeenCalledWith(expect.stringMatching(/no consumer takes/i), {
    events: [{ eventId: 'thing-1:shipped', type: 'ThingShipped' }],
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
  const withId = (eventId: string): EventEnvelope => ({ ...undone('thing-1'), eventId });
  const eventIdOf = (entry: SendMessageBatchRequestEntry) => entry.MessageAttributes?.eventId?.StringValue;

  test('an event id over 80 characters and two ids equal once punctuation is replaced (a.1, a:1) publish, with the nine beside them', async () => {
    sqs.on(SendMessageBatchCommand).callsFake(sqsCheckingIds());
    // 128 printable characters: a valid event id (a FIFO dedup id), not a valid batch entry id.
    const long = withId(`thing-1.${'x'.repeat(122)}`);
    const events = [long, withId('a.1'), withId('a:1'), ...Array.from({ length: 7 }, (_, i) => withId(`thing-${i}`))];

    const failed = await new SqsEventPublisher(client, ROUTES).publish(events);

    expect([...failed]).toEqual([]);
    expect(sentTo(FIFO_URL).map(eventIdOf)).toEqual(events.map((e) => e.eventId));
    expect(sentTo(FIFO_URL).map((e) => e.Id)).toEqual(events.map((_, i) => String(i)));
  });

  test('a failed entry is mapped back to its event by position, chunk by chunk (ids restart at 0 in each chunk of 10)', async () => {
    // The 12th event (position 1 of the second chunk) fails; its entry id, "1", is also the 2nd event's.
    sqs.on(SendMessageBatchCommand).callsFake(sqsCheckingIds((entry) => eventIdOf(entry) === 'thing-11:undone'));
    const events = Array.from({ length: 12 }, (_, i) => undone(`thing-${i}`));

    const failed = await new SqsEventPublisher(client, ROUTES).publish(events);

    expect([...failed]).toEqual(['thing-11:undone']);
    const calls = sqs.commandCalls(SendMessageBatchCommand).map((c) => c.args[0].input.Entries ?? []);
    expect(calls.map((entries) => entries.map((e) => e.Id))).toEqual([
      ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9'],
      ['0', '1'],
    ]);
  });
});
