import { PermanentError } from '@exactly-once/runtime/errors';
import { parseEnvelope } from '@exactly-once/runtime/envelope';
import { checkOutboxEvent } from '@exactly-once/runtime/outbox/outbox-event';
import { thingHappened } from '../exactly-once/fixtures/probe-events';

/** The envelope alone: what the generic consumer pipeline and the outbox check read, whatever the domain. */

const envelope = {
  eventId: 'thing-1.created',
  type: 'ThingCreated',
  entityId: 'thing-1',
  version: 1,
  occurredAt: '2030-01-02T03:04:05.000Z',
  payload: { anything: ['the domain', 'decides'] },
};

function permanentErrorOf(body: string): PermanentError {
  try {
    parseEnvelope(body);
  } catch (error) {
    if (error instanceof PermanentError) return error;
    throw error;
  }
  throw new Error(`parsed: ${body}`);
}

describe('parseEnvelope', () => {
  test('reads an envelope of any type and payload', () => {
    expect(parseEnvelope(JSON.stringify(envelope))).toEqual(envelope);
  });

  test.each([
    ['no entityId', { ...envelope, entityId: undefined }, 'entityId'],
    ['an empty entityId', { ...envelope, entityId: '' }, 'entityId'],
    ['no type', { ...envelope, type: undefined }, 'type'],
    ['a version of 0', { ...envelope, version: 0 }, 'version'],
    ['a fractional version', { ...envelope, version: 1.5 }, 'version'],
    ['no eventId', { ...envelope, eventId: undefined }, 'eventId'],
  ])('a body with %s is a SchemaViolation naming the field', (_what, body, field) => {
    const error = permanentErrorOf(JSON.stringify(body));

    expect(error.permanentCause).toBe('SchemaViolation');
    expect(error.message).toMatch(new RegExp(`^Message body is not an event envelope: .*${field}`));
  });

  test('a body that is not JSON is a SchemaViolation', () => {
    expect(permanentErrorOf('{"eventId":').permanentCause).toBe('SchemaViolation');
  });
});

describe('checkOutboxEvent (can the relay publish this item at all?)', () => {
  test('an envelope is publishable whatever its payload: the payload is its consumers’ to check', () => {
    // A payload its consumers would refuse (no amount): still the envelope the relay routes.
    const unreadableThing = { ...thingHappened('thing-1'), payload: { amount: 'none' } };

    expect(checkOutboxEvent(envelope)).toEqual({ ok: true, event: envelope });
    expect(checkOutboxEvent({ ...envelope, orderingKey: 'account-7' })).toEqual({
      ok: true,
      event: { ...envelope, orderingKey: 'account-7' },
    });
    expect(checkOutboxEvent(unreadableThing)).toEqual({ ok: true, event: unreadableThing });
  });

  test.each([
    ['no event', undefined, /no event/],
    ['no entityId', { ...envelope, entityId: undefined }, /entityId/],
    ['an entityId that cannot be a FIFO group id', { ...envelope, entityId: 'thing 1' }, /entityId and eventId/],
    ['an eventId that cannot be a FIFO dedup id', { ...envelope, eventId: 'é' }, /entityId and eventId/],
    ['a payload SQS refuses (U+FFFF)', { ...envelope, payload: 'x\uFFFF' }, /U\+FFFE, U\+FFFF/],
    ['an orderingKey that cannot be a FIFO group id', { ...envelope, orderingKey: 'account 7' }, /orderingKey must be/],
    ['an empty orderingKey', { ...envelope, orderingKey: '' }, /orderingKey/],
  ])('an item with %s is not publishable, and says why', (_what, raw, reason) => {
    const check = checkOutboxEvent(raw);

    expect(check.ok).toBe(false);
    expect(!check.ok && check.reason).toMatch(reason);
  });
});
