import { RESENT_BY_FAULT_ATTRIBUTE } from '@exactly-once/runtime/faults/relay-faults';
import { DeliveryEvidence } from '@exactly-once/tools/local-runtime/host/delivery-evidence';

/** The host's evidence that a delivery fault fired, from the SQS events it hands to a function. */
const sqsEvent = (...records: { messageId: string; eventId?: string; resent?: boolean }[]) => ({
  Records: records.map(({ messageId, eventId, resent }) => ({
    eventSource: 'aws:sqs',
    messageId,
    body: eventId === undefined ? 'not json' : JSON.stringify({ eventId }),
    ...(resent === undefined
      ? {}
      : { messageAttributes: { [RESENT_BY_FAULT_ATTRIBUTE]: { stringValue: String(resent), dataType: 'String' } } }),
  })),
});

const completed = { ok: true, payload: { batchItemFailures: [] } };

test('a message handed over again while its first invocation still works on it, which then completes it, counts as a redelivery while running', () => {
  const evidence = new DeliveryEvidence();

  const endFirst = evidence.begin(sqsEvent({ messageId: 'm1', eventId: 'e1' }));
  const endSecond = evidence.begin(sqsEvent({ messageId: 'm1', eventId: 'e1' }));
  endSecond(completed);
  endFirst(completed);

  expect(evidence.counts).toEqual({
    redeliveredWhileRunning: 1,
    eventsResent: 0,
    eventsStampedAhead: 0,
  });
});

test('a message handed over again after its first invocation ended is not a redelivery while running', () => {
  const evidence = new DeliveryEvidence();

  evidence.begin(sqsEvent({ messageId: 'm1', eventId: 'e1' }))(completed);
  evidence.begin(sqsEvent({ messageId: 'm1', eventId: 'e1' }))(completed);

  expect(evidence.counts).toEqual({
    redeliveredWhileRunning: 0,
    eventsResent: 0,
    eventsStampedAhead: 0,
  });
});

test.each([
  [
    'reported failed (released early after a transient error)',
    { ok: true, payload: { batchItemFailures: [{ itemIdentifier: 'm1' }] } },
  ],
  ['in an invocation that crashed or timed out', { ok: false }],
])(
  'a message handed over again while the first invocation ran, but %s, is not a slow-handler redelivery',
  (_name, outcome) => {
    const evidence = new DeliveryEvidence();

    const endFirst = evidence.begin(sqsEvent({ messageId: 'm1', eventId: 'e1' }, { messageId: 'm2', eventId: 'e2' }));
    evidence.begin(sqsEvent({ messageId: 'm1', eventId: 'e1' }))(completed);
    endFirst(outcome);

    expect(evidence.counts.redeliveredWhileRunning).toBe(0);
  },
);

test("an event in a message the resend fault sent counts once per event; the relay's replay or a redrive under a new message id does not", () => {
  const evidence = new DeliveryEvidence();

  evidence.begin(sqsEvent({ messageId: 'm1', eventId: 'e1' }, { messageId: 'p1' }))(completed);
  evidence.begin(sqsEvent({ messageId: 'm2', eventId: 'e1' }, { messageId: 'm3', eventId: 'e2', resent: false }))(
    completed,
  );
  evidence.begin(sqsEvent({ messageId: 'm4', eventId: 'e1', resent: true }, { messageId: 'p2', resent: true }))(
    completed,
  );
  evidence.begin(sqsEvent({ messageId: 'm5', eventId: 'e1', resent: true }))(completed);

  expect(evidence.counts).toEqual({
    redeliveredWhileRunning: 0,
    eventsResent: 1,
    eventsStampedAhead: 0,
  });
});

test('events that are not SQS deliveries (stream records, schedules, API calls) leave no evidence', () => {
  const evidence = new DeliveryEvidence();

  const endStream = evidence.begin({ Records: [{ eventSource: 'aws:dynamodb', messageId: 'x' }] });
  evidence.begin({ Records: [{ eventSource: 'aws:dynamodb', messageId: 'x' }] })(completed);
  endStream(completed);
  evidence.begin({ source: 'aws.events' })(completed);
  evidence.begin(null)(completed);

  expect(evidence.counts).toEqual({
    redeliveredWhileRunning: 0,
    eventsResent: 0,
    eventsStampedAhead: 0,
  });
});

test('an event stamped more than a minute after its message was sent counts once as stamped ahead; a stamp before the send does not', () => {
  const evidence = new DeliveryEvidence();
  const sentAt = Date.parse('2026-12-05T10:00:00.000Z');
  const record = (messageId: string, eventId: string, occurredAt: string) => ({
    eventSource: 'aws:sqs',
    messageId,
    body: JSON.stringify({ eventId, occurredAt }),
    attributes: { SentTimestamp: String(sentAt) },
  });

  evidence.begin({ Records: [record('m1', 'ahead', '2026-12-05T10:04:00.000Z')] })(completed);
  evidence.begin({ Records: [record('m2', 'ahead', '2026-12-05T10:04:00.000Z')] })(completed);
  evidence.begin({ Records: [record('m3', 'behind', '2026-12-05T09:59:59.000Z')] })(completed);
  evidence.begin({ Records: [record('m4', 'close', '2026-12-05T10:00:30.000Z')] })(completed);

  expect(evidence.counts.eventsStampedAhead).toBe(1);
});
