import { checkProviderCalls } from '@exactly-once/tools/proof-kit/verify';
import { PROBE_SPEC } from '../exactly-once/fixtures/probe-spec';
import { PROBE_STACK_CONSUMERS } from '../exactly-once/fixtures/probe-stack-consumers';
import { PROBE_PROOF } from '../support/neutral-proof-domain';
import { happenedEventIdOf, undoneEventIdOf } from '../exactly-once/fixtures/probe-stack-things';

/**
 * The proof kit's generic provider invariants on crafted tables, on the neutral fixture's domain (things
 * that happened, then maybe were undone) and its two probe consumers as the probe stack lists them (each
 * naming the provider its effect calls): each check passes on a clean
 * record and fails on a record that breaks it, so the kit can fail.
 */

const THING = 'thing_1';
const HAPPENED = happenedEventIdOf(THING);
const UNDONE = undoneEventIdOf(THING);
const DONE = { providerCallDoneAt: '2030-01-01T00:00:09.000Z' };

function inbox(
  consumer: string,
  eventId: string,
  extra: Record<string, unknown> = DONE,
): [string, Record<string, unknown>] {
  return [`INBOX#${consumer}#${eventId}`, { pk: `INBOX#${consumer}#${eventId}`, ...extra }];
}

function call(idempotencyKey: string, firstCalledAt: string, lastCalledAt = firstCalledAt): Record<string, unknown> {
  return { idempotencyKey, calls: firstCalledAt === lastCalledAt ? 1 : 2, firstCalledAt, lastCalledAt };
}

/** An undone thing: probe took its ThingHappened, probe-fifo both of its events, each call made and recorded done. */
function undoneThing() {
  return {
    entities: [{ entity: 'THING', thingId: THING, status: 'UNDONE', ownerId: 'run-o-1', amount: 1 }],
    effects: new Map([inbox('probe', HAPPENED), inbox('probe-fifo', HAPPENED), inbox('probe-fifo', UNDONE)]),
    providerItems: [
      call(`probe:${HAPPENED}`, '2030-01-01T00:00:01.000Z'),
      call(`probe-fifo:${HAPPENED}`, '2030-01-01T00:00:01.000Z'),
      call(`probe-fifo:${UNDONE}`, '2030-01-01T00:00:05.000Z'),
    ],
  };
}
const check = (record: ReturnType<typeof undoneThing>, consumers = PROBE_STACK_CONSUMERS) =>
  checkProviderCalls(record, consumers, PROBE_PROOF);

test('a clean record: every owed call made once and recorded done: no violation', () => {
  expect(check(undoneThing())).toEqual([]);
});

test('a call that reached the provider but is not recorded done on the inbox is a provider violation', () => {
  const record = undoneThing();
  record.effects.set(...inbox('probe', HAPPENED, {}));

  expect(check(record)).toEqual([
    {
      invariant: 'provider',
      detail: `key probe:${HAPPENED} reached the provider but the inbox does not record the call done`,
    },
  ]);
});

// --- Each event once per consumer: the generic invariant, for a consumer no code of the kit names. ---
describe('each event once per consumer, with a third consumer on the list', () => {
  // Takes ThingHappened only, so a key under ThingUndone is one it never owes.
  const AUDIT = 'audit';
  const audit = { ...PROBE_SPEC, name: AUDIT, eventTypes: ['ThingHappened'], providers: [AUDIT] };
  const consumers = [...PROBE_STACK_CONSUMERS, audit];

  /** The clean undone thing, with the third consumer's claim and its one call. */
  function withAudit() {
    const record = undoneThing();
    record.effects.set(...inbox(AUDIT, HAPPENED));
    record.providerItems.push(call(`${AUDIT}:${HAPPENED}`, '2030-01-01T00:00:02.000Z'));
    return record;
  }

  test('its claim and one provider call per event it takes: no violation', () => {
    expect(check(withAudit(), consumers)).toEqual([]);
  });

  test('an event it takes with no inbox claim is reported: never applied, or applied without its claim', () => {
    const record = withAudit();
    record.effects.delete(`INBOX#${AUDIT}#${HAPPENED}`);

    expect(check(record, consumers)).toEqual([
      {
        invariant: 'each-event-once-per-consumer',
        detail: `${AUDIT}: ThingHappened ${HAPPENED} has no inbox claim INBOX#${AUDIT}#${HAPPENED}: never applied, or applied without its claim`,
      },
    ]);
  });

  test('its provider called twice with no claim to deduplicate is a double effect', () => {
    const record = withAudit();
    record.effects.delete(`INBOX#${AUDIT}#${HAPPENED}`);
    record.providerItems[3] = call(`${AUDIT}:${HAPPENED}`, '2030-01-01T00:00:02.000Z', '2030-01-01T00:00:03.000Z');

    expect(check(record, consumers)).toContainEqual({
      invariant: 'each-event-once-per-consumer',
      detail: `key ${AUDIT}:${HAPPENED} called 2 times with no inbox claim to deduplicate: a double effect`,
    });
  });

  test('a repeat under its key with the claim in place is the owed call retried, which the key makes harmless', () => {
    const record = withAudit();
    record.providerItems[3] = call(`${AUDIT}:${HAPPENED}`, '2030-01-01T00:00:02.000Z', '2030-01-01T00:00:03.000Z');

    expect(check(record, consumers)).toEqual([]);
  });

  test('an event it takes that never reached its provider is reported under its key', () => {
    const record = withAudit();
    record.providerItems.pop();

    expect(check(record, consumers)).toEqual([
      { invariant: 'provider', detail: `no provider call under key ${AUDIT}:${HAPPENED}` },
    ]);
  });

  test('an event it found stale (its entry superseded by a later event of its entity) owes no call; with no entry at all it is reported', () => {
    const stale = withAudit();
    stale.effects.set(...inbox(AUDIT, HAPPENED, { supersededBy: UNDONE }));
    stale.providerItems.pop();
    const lost = withAudit();
    lost.effects.delete(`INBOX#${AUDIT}#${HAPPENED}`);
    lost.providerItems.pop();

    expect(check(stale, consumers)).toEqual([]);
    expect(check(lost, consumers)).toEqual([
      {
        invariant: 'each-event-once-per-consumer',
        detail: `${AUDIT}: ThingHappened ${HAPPENED} has no inbox claim INBOX#${AUDIT}#${HAPPENED}: never applied, or applied without its claim`,
      },
      { invariant: 'provider', detail: `no provider call under key ${AUDIT}:${HAPPENED}` },
    ]);
  });

  test('a key for an event type its spec does not take, or for a consumer not on the list, is unexpected', () => {
    const record = withAudit();
    record.providerItems.push(call(`${AUDIT}:${UNDONE}`, '2030-01-01T00:00:06.000Z'));

    expect(check(record, consumers)).toEqual([
      { invariant: 'provider', detail: `unexpected provider call under key ${AUDIT}:${UNDONE}` },
    ]);
    expect(check(withAudit())).toEqual([
      { invariant: 'provider', detail: `unexpected provider call under key ${AUDIT}:${HAPPENED}` },
    ]);
  });
});

// --- A consumer whose spec names no provider: it owes its claim for every event it takes, and no call. ---
describe('a consumer whose spec names no provider, beside consumers that name one', () => {
  // Takes both event types, as a FIFO ledger of its own would: no provider behind its effect.
  const LEDGER = 'ledger';
  const ledger = { ...PROBE_SPEC, name: LEDGER, eventTypes: ['ThingHappened', 'ThingUndone'] };
  const consumers = [...PROBE_STACK_CONSUMERS, ledger];

  /** The clean undone thing, with the ledger's claims on both events and no call of its own. */
  function withLedger() {
    const record = undoneThing();
    record.effects.set(...inbox(LEDGER, HAPPENED, { claimedAt: '2030-01-01T00:00:02.000Z' }));
    record.effects.set(...inbox(LEDGER, UNDONE, { claimedAt: '2030-01-01T00:00:06.000Z' }));
    return record;
  }

  test('its claims all there and no provider call anywhere under its keys: no violation, and no call owed', () => {
    const record = withLedger();

    expect(checkProviderCalls({ ...record, performed: performedOnce(record) }, consumers, PROBE_PROOF)).toEqual([]);
  });

  test('a claim of its missing fails the proof: a consumer that applied nothing does not pass for owing no call', () => {
    const record = withLedger();
    record.effects.delete(`INBOX#${LEDGER}#${UNDONE}`);

    expect(check(record, consumers)).toEqual([
      {
        invariant: 'each-event-once-per-consumer',
        detail: `${LEDGER}: ThingUndone ${UNDONE} has no inbox claim INBOX#${LEDGER}#${UNDONE}: never applied, or applied without its claim`,
      },
    ]);
  });

  test('a provider call under its key is one nobody owes', () => {
    const record = withLedger();
    record.providerItems.push(call(`${LEDGER}:${HAPPENED}`, '2030-01-01T00:00:03.000Z'));

    expect(check(record, consumers)).toEqual([
      { invariant: 'provider', detail: `unexpected provider call under key ${LEDGER}:${HAPPENED}` },
    ]);
  });

  test('a consumer beside it that names a provider still owes its call, at the log and at the provider', () => {
    const record = withLedger();
    record.providerItems = record.providerItems.filter((i) => i.idempotencyKey !== `probe-fifo:${UNDONE}`);
    const performed = performedOnce(record);

    expect(checkProviderCalls({ ...record, performed }, consumers, PROBE_PROOF)).toEqual([
      { invariant: 'provider', detail: `no provider call under key probe-fifo:${UNDONE}` },
      { invariant: 'provider-effects', detail: `key probe-fifo:${UNDONE} performed 0 times at the provider, not once` },
    ]);
  });
});

/** What the provider performed for a record: each call of its log once, as the local provider's log says. */
function performedOnce(record: ReturnType<typeof undoneThing>) {
  return record.providerItems.map((item, seq) => ({
    key: String(item.idempotencyKey),
    seq,
    payload: {},
    endpoint: String(item.idempotencyKey).split(':')[0],
  }));
}
