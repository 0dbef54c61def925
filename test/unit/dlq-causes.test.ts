import type { PermanentCause } from '@exactly-once/runtime/errors';
import {
  causeOf,
  DEDUPE_HORIZON_PASSED_CAUSE,
  EVENT_ID_REUSED_CAUSE,
  isPoison,
  isSentPoison,
  OCCURRED_IN_FUTURE_CAUSE,
  POISON_CAUSE,
  poisonBody,
  PROVIDER_KEY_WINDOW_CAUSE,
  RETRIES_EXHAUSTED,
} from '@exactly-once/tools/dlq/causes';

// The tools' one definition of a dead letter's cause and of poison (dlq/causes.ts), on a domain of
// its own: an event is an envelope of type ThingHappened, whatever the example is.
const isEvent = (body: string) => {
  try {
    return (JSON.parse(body) as { type?: unknown }).type === 'ThingHappened';
  } catch {
    return false;
  }
};
const event = (occurredAt: unknown) =>
  JSON.stringify({ eventId: 'e-1', type: 'ThingHappened', entityId: 'thing-1', version: 1, occurredAt, payload: {} });
const STAMPED = event('2026-12-01T10:00:00Z');

test("each cause name is the consumer's PermanentCause, and a message with none ran out of retries", () => {
  // Arrange: the names as the mechanism's consumers write them (packages/runtime/src/errors.ts).
  const written: Record<string, PermanentCause> = {
    poison: 'SchemaViolation',
    eventIdReused: 'EventIdReused',
    occurredInFuture: 'OccurredInFuture',
    providerKeyWindow: 'ProviderKeyWindowPassed',
    dedupeHorizon: 'DedupeHorizonPassed',
  };

  // Act
  const defined = {
    poison: POISON_CAUSE,
    eventIdReused: EVENT_ID_REUSED_CAUSE,
    occurredInFuture: OCCURRED_IN_FUTURE_CAUSE,
    providerKeyWindow: PROVIDER_KEY_WINDOW_CAUSE,
    dedupeHorizon: DEDUPE_HORIZON_PASSED_CAUSE,
  };

  // Assert
  expect(defined).toEqual(written);
  expect(RETRIES_EXHAUSTED).toBe('RetriesExhausted');
  expect(causeOf({ attributes: {} })).toBe('RetriesExhausted');
  expect(causeOf({ attributes: { failureCause: 'EventIdReused' } })).toBe('EventIdReused');
  // A cause stored under its earlier name reads by its name now.
  expect(causeOf({ attributes: { failureCause: 'UnknownEntity' } })).toBe('UnsupportedEventType');
});

test('poison: SchemaViolation as the cause, or, with no cause, a body no consumer can read as an event', () => {
  // Arrange
  const refused = { body: poisonBody({ n: 0 }), attributes: { failureCause: 'SchemaViolation' } };
  const movedBySqs = { body: poisonBody({ n: 1 }), attributes: {} };
  const noTimestamp = { body: event('last tuesday'), attributes: {} };

  // Act
  const judged = [refused, movedBySqs, noTimestamp].map((m) => isPoison(m, isEvent));

  // Assert
  expect(judged).toEqual([true, true, true]);
});

test('not poison: an event with another cause, or with none and a readable occurredAt, comes back on a redrive', () => {
  // Arrange
  const reused = { body: STAMPED, attributes: { failureCause: 'EventIdReused' } };
  const exhausted = { body: STAMPED, attributes: {} };
  // The cause wins over the body: a consumer that wrote one read the message.
  const causeNotPoison = { body: poisonBody({ n: 2 }), attributes: { failureCause: 'DedupeHorizonPassed' } };

  // Act
  const judged = [reused, exhausted, causeNotPoison].map((m) => isPoison(m, isEvent));

  // Assert
  expect(judged).toEqual([false, false, false]);
});

test("the poison a tool sends: its body, recognised as sent, and as one run's only with that run's id", () => {
  // Arrange
  const body = poisonBody({ runId: 'run-2', n: 0, note: 'not an event' });

  // Act
  const judged = {
    sent: isSentPoison(body),
    thisRun: isSentPoison(body, 'run-2'),
    earlierRun: isSentPoison(body, 'run-1'),
    event: isSentPoison(STAMPED),
    notJson: isSentPoison('{"poison":true'),
  };

  // Assert
  expect(body).toBe('{"poison":true,"runId":"run-2","n":0,"note":"not an event"}');
  expect(judged).toEqual({ sent: true, thisRun: true, earlierRun: false, event: false, notJson: false });
});
