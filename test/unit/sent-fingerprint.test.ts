import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { consumeRecord } from '@exactly-once/runtime/consumer/consume-record';
import { parseEnvelope, type EventEnvelope } from '@exactly-once/runtime/envelope';
import {
  bodyFingerprint,
  eventFingerprint,
  fingerprintsDiffer,
  FINGERPRINT_VERSION,
  sentFingerprint,
} from '@exactly-once/runtime/inbox/fingerprint';
import { recordWork } from '../support/record-work';
import { memoryEntityConsumer, recordOf, TABLE, thing } from '../support/memory-entity-consumer';

/**
 * The inbox claim's fingerprint is of what the producer sent (the message body), never of the
 * consumer's parse: a deploy that changes the consumer's schema between a claim and its retry must
 * not turn the retry into EventIdReused and lose the provider call it still owes. On the generic
 * entity effect over the in-memory DynamoDB, records through consumeRecord as a queue delivers them.
 */

/** The consumer's parse after a deploy: its schema now gives the payload a default field. */
function parseWithDefault(body: string): EventEnvelope {
  const event = parseEnvelope(body);
  return { ...event, payload: { channel: 'web', ...(event.payload as Record<string, unknown>) } };
}

describe('a fingerprint of what was sent', () => {
  test('a schema change between the claim and the duplicate (the parse adds a default) still reads as a duplicate, and the owed provider call is made once', async () => {
    const c = memoryEntityConsumer();
    const event = thing('thing-1', { amountCents: 100 });
    const body = JSON.stringify(event);
    c.provider.failing = new Error('provider down');
    const firstTry = consumeRecord(recordOf(body), c.settings, parseEnvelope, c.apply, recordWork().work);
    await expect(firstTry).rejects.toThrow('provider down');
    c.provider.failing = undefined;

    const retry = await consumeRecord(
      recordOf(body),
      c.settings,
      parseWithDefault,
      c.apply,
      recordWork({ leaseHolder: 'after-the-deploy' }).work,
    );

    expect(retry).toBe('duplicate');
    expect(c.deadLetterCauses()).toEqual([]);
    expect(c.appliedCount('thing-1')).toBe(1);
    expect(c.provider.performed).toEqual([`probe:${event.eventId}`]);
    expect(c.inbox(event)?.providerCallDoneAt).toEqual(expect.any(String));
  });

  test('a different body under the same id is still EventIdReused: dead-lettered with both fingerprints, nothing applied again, no second call', async () => {
    const c = memoryEntityConsumer();
    const event = thing('thing-2', { amountCents: 100 });
    await consumeRecord(recordOf(JSON.stringify(event)), c.settings, parseEnvelope, c.apply, recordWork().work);
    const claim = c.inbox(event);

    const reused = await consumeRecord(
      recordOf(JSON.stringify({ ...event, payload: { amountCents: 999 } })),
      c.settings,
      parseEnvelope,
      c.apply,
      recordWork({ leaseHolder: 'reused' }).work,
    );

    expect(reused).toBe('dead-lettered');
    expect(c.deadLetterCauses()).toEqual(['EventIdReused']);
    expect(c.control.sendToDeadLetterQueue.mock.calls[0][0].attributes).toMatchObject({
      storedFingerprint: claim?.fingerprint,
      deliveredFingerprint: expect.stringMatching(new RegExp(`^${FINGERPRINT_VERSION}:`)),
    });
    expect(c.appliedCount('thing-2')).toBe(1);
    expect(c.provider.performed).toEqual([`probe:${event.eventId}`]);
    expect(c.inbox(event)).toEqual(claim);
  });

  test('the same body with occurredAt and traceparent rewritten (a redrive past the horizon, refreshed trace context) is a duplicate', async () => {
    const c = memoryEntityConsumer();
    const event = thing('thing-3');
    await consumeRecord(recordOf(JSON.stringify(event)), c.settings, parseEnvelope, c.apply, recordWork().work);
    const rewritten = {
      ...event,
      occurredAt: new Date().toISOString(),
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    };

    const redriven = await consumeRecord(
      recordOf(JSON.stringify(rewritten)),
      c.settings,
      parseEnvelope,
      c.apply,
      recordWork({ leaseHolder: 'redrive' }).work,
    );

    expect(redriven).toBe('duplicate');
    expect(c.deadLetterCauses()).toEqual([]);
    expect(c.provider.performed).toEqual([`probe:${event.eventId}`]);
  });

  test('a claim whose fingerprint is of an older version (v1 hashed the parse) is taken as the same event, never as a mismatch', async () => {
    const c = memoryEntityConsumer();
    const event = thing('thing-4');
    await c.apply(event, recordWork().work);
    const claim = c.inbox(event)!;
    // As the code before fingerprint versions wrote it: 32 hex characters, no version prefix.
    await c.documents.send(
      new PutCommand({ TableName: TABLE, Item: { ...claim, fingerprint: '0123456789abcdef0123456789abcdef' } }),
    );

    const retry = await consumeRecord(
      recordOf(JSON.stringify({ ...event, payload: { anything: 'else' } })),
      c.settings,
      parseEnvelope,
      c.apply,
      recordWork({ leaseHolder: 'after-the-upgrade' }).work,
    );

    expect(retry).toBe('duplicate');
    expect(c.deadLetterCauses()).toEqual([]);
    expect(c.appliedCount('thing-4')).toBe(1);
  });

  test('a ledger called without a record fingerprints the envelope it is given: the same value as the body the relay sends for it', async () => {
    const c = memoryEntityConsumer();
    const event = thing('thing-5', { b: 1, a: [2, 1] });

    await c.apply(event);

    expect(c.inbox(event)?.fingerprint).toBe(eventFingerprint(event));
    expect(eventFingerprint(event)).toBe(bodyFingerprint(JSON.stringify(event)));
  });
});

describe('the fingerprint functions', () => {
  const event = thing('thing-6', { amountCents: 1, lines: [{ sku: 'a' }] });

  test('canonical: key order and whitespace do not count; occurredAt and traceparent are left out; anything else counts', () => {
    const reordered = `{ "payload": { "lines": [ { "sku": "a" } ], "amountCents": 1 }, "version": 1, "type": "${event.type}",
      "entityId": "${event.entityId}", "eventId": "${event.eventId}", "occurredAt": "2020-01-01T00:00:00Z" }`;

    expect(bodyFingerprint(reordered)).toBe(sentFingerprint(event));
    expect(sentFingerprint({ ...event, traceparent: 'x' })).toBe(sentFingerprint(event));
    expect(sentFingerprint({ ...event, tenant: 't-1' })).not.toBe(sentFingerprint(event));
    expect(
      sentFingerprint({ ...event, payload: { ...(event.payload as Record<string, unknown>), extra: null } }),
    ).not.toBe(sentFingerprint(event));
    expect(sentFingerprint(event)).toMatch(/^v2:[0-9a-f]{32}$/);
  });

  test('a body that is not JSON is fingerprinted as the string it is, never thrown on', () => {
    expect(bodyFingerprint('not json')).toBe(sentFingerprint('not json'));
    expect(bodyFingerprint('not json')).not.toBe(bodyFingerprint('not json!'));
  });

  test('only a stored fingerprint of this version that differs says "another event"', () => {
    const delivered = sentFingerprint(event);

    expect(fingerprintsDiffer(delivered, delivered)).toBe(false);
    expect(fingerprintsDiffer(sentFingerprint({ ...event, version: 2 }), delivered)).toBe(true);
    expect(fingerprintsDiffer('0123456789abcdef0123456789abcdef', delivered)).toBe(false);
    expect(fingerprintsDiffer(undefined, delivered)).toBe(false);
  });
});
