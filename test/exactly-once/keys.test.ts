import { inboxPk, providerKey } from '@exactly-once/runtime/inbox/keys';

/**
 * The keys one event is known by (packages/runtime/src/inbox/keys.ts): a provider key a Stripe-like
 * provider takes (printable ASCII, at most 255 characters) for any tenant, and no two events sharing
 * an inbox key or a provider key.
 */

const PRINTABLE_ASCII = /^[\x21-\x7e]+$/;

test('an event without a tenant keeps the keys it always had', () => {
  const event = { eventId: 'ord-1.placed' };

  const keys = [providerKey('loyalty', event), inboxPk('loyalty', event)];

  expect(keys).toEqual(['loyalty:ord-1.placed', 'INBOX#loyalty#ord-1.placed']);
});

test("a tenant's ARN of 2,048 characters gives a provider key of printable ASCII within 255 characters", () => {
  const prefix = 'arn:aws:sts::123456789012:assumed-role/';
  const tenant = `${prefix}${'p/'.repeat((2048 - prefix.length - 23) / 2)}Role/person@example.com`;
  const event = { eventId: 'e'.repeat(199), tenant };

  const key = providerKey('a-consumer-name-of-thirty-two-ch', event);

  expect(tenant).toHaveLength(2048);
  expect(key.length).toBeLessThanOrEqual(255);
  expect(key).toMatch(PRINTABLE_ASCII);
  expect(key).not.toContain('person');
});

test('no two (tenant, eventId) pairs share a provider key or an inbox key', () => {
  const events = [
    { eventId: 'x:y' },
    { eventId: 'y', tenant: 'x' },
    { eventId: 'x@y:z' },
    { eventId: 'a#b' },
    { eventId: 'b', tenant: 'a' },
    { eventId: 'a%23b' },
    { eventId: 'b', tenant: 'arn:aws:iam::1:role/A' },
    { eventId: 'b', tenant: 'arn:aws:iam::1:role/B' },
  ];

  const providerKeys = new Set(events.map((e) => providerKey('c', e)));
  const inboxKeys = new Set(events.map((e) => inboxPk('c', e)));

  expect([providerKeys.size, inboxKeys.size]).toEqual([events.length, events.length]);
});
