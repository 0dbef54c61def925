import { SEQUENCE_ATTRIBUTES, sequencedEntityKey } from '@exactly-once/runtime/aws/sequenced-ledger';
import { providerKey, type ConsumerSpec } from '@exactly-once/runtime/consumer-spec';
import { eventFingerprint, fingerprintsDiffer } from '@exactly-once/runtime/inbox/fingerprint';
import type { ProducedEvent, Violation } from './domain';
import { EACH_EVENT_ONCE, EVENT_REPLACED, versionOf } from './inbox-claims';

/**
 * Reading a sequenced consumer's claims (ConsumerSpec.ledger `sequenced`, aws/sequenced-ledger.ts) for the
 * produced events: each entity's claim lives on its item (`sequencedEntityKey`), which holds the last
 * event claimed on it (`seq`, its id and fingerprint), how many claims were ever made on it, and the
 * provider calls still owed. An older event of the entity leaves no trace of its own: it was applied and
 * then superseded, or judged stale against a newer one, and either is lawful, since a newer one exists.
 * So the kit holds the item to the entity's events: the newest is its claim, under its own content; no
 * more claims were made than the entity has events (one more is an event applied twice, or a stale one
 * applied over a newer); no more of its events reached the provider than were claimed; and no call is
 * still owed after the drain.
 */

/** What one sequenced consumer's claims say of the produced events. */
export interface SequencedJudgement {
  violations: Violation[];
  /** The provider keys owed for certain: each entity's newest event's (its claim on the item). */
  owedKeys: Set<string>;
  /** The keys of the older events: each called at most once, or not at all when it was judged stale. */
  mayOweKeys: Set<string>;
  /** The claims its items record for these events. */
  applied: number;
}

/** The produced events a consumer takes, grouped by the entity item its claims live on, oldest first. */
function byEntityItem(events: readonly ProducedEvent[], consumer: ConsumerSpec): Map<string, ProducedEvent[]> {
  const groups = new Map<string, ProducedEvent[]>();
  for (const event of events) {
    if (!consumer.eventTypes.includes(event.type)) continue;
    const { pk } = sequencedEntityKey(consumer.name, event);
    groups.set(pk, [...(groups.get(pk) ?? []), event]);
  }
  for (const group of groups.values()) group.sort((a, b) => (versionOf(a) ?? 0) - (versionOf(b) ?? 0));
  return groups;
}

/**
 * The owed calls an entity item still holds: `owedCall` or `owedCall#<eventId>`, each a map naming its
 * provider key (an event id may hold colons, so the leases beside them are told apart by their values).
 */
function owedCallsOn(item: Record<string, unknown>): { eventId?: unknown; providerKey?: unknown }[] {
  return Object.entries(item)
    .filter(([name, value]) => name.startsWith('owedCall') && typeof value === 'object' && value !== null)
    .map(([, call]) => call as { eventId?: unknown; providerKey?: unknown })
    .filter((call) => call.providerKey !== undefined);
}

/**
 * Each event once per consumer, for a consumer on the sequenced ledger (see the module). `effects` is the
 * effects table by `pk`, `providerLog` the provider log by key; `optional`, keys the domain lets go uncalled.
 *
 * @example verify.ts judges the sequenced consumers of the list with it
 * ```ts
 * const judged = checkSequencedConsumer({ events, consumer, effects, providerLog });
 * violations.push(...judged.violations);
 * ```
 */
export function checkSequencedConsumer(input: {
  events: readonly ProducedEvent[];
  consumer: ConsumerSpec;
  effects: ReadonlyMap<string, Record<string, unknown>>;
  providerLog: ReadonlyMap<string, Record<string, unknown>>;
  optional?: ReadonlySet<string>;
}): SequencedJudgement {
  const { consumer } = input;
  const name = consumer.name;
  const owesCall = (consumer.providers?.length ?? 0) > 0;
  const judged: SequencedJudgement = { violations: [], owedKeys: new Set(), mayOweKeys: new Set(), applied: 0 };
  const fail = (invariant: string, detail: string) => judged.violations.push({ invariant, detail });
  for (const [pk, taken] of byEntityItem(input.events, consumer)) {
    const newest = taken[taken.length - 1];
    const keyOf = (event: ProducedEvent) => providerKey(name, event);
    if (owesCall) {
      for (const older of taken.slice(0, -1)) judged.mayOweKeys.add(keyOf(older));
      if (!input.optional?.has(keyOf(newest))) judged.owedKeys.add(keyOf(newest));
    }
    const item = input.effects.get(pk);
    if (item?.[SEQUENCE_ATTRIBUTES.seq] === undefined) {
      for (const event of taken)
        fail(
          EACH_EVENT_ONCE,
          `${name}: ${event.type} ${event.eventId} has no sequenced claim on ${pk}: never applied, or applied without its claim`,
        );
      continue;
    }
    const seq = item[SEQUENCE_ATTRIBUTES.seq];
    const lastId = item[SEQUENCE_ATTRIBUTES.eventId];
    const claims = Number(item[SEQUENCE_ATTRIBUTES.claims] ?? 0);
    judged.applied += claims;
    if (lastId !== newest.eventId || seq !== versionOf(newest)) {
      const held = taken.find((e) => e.eventId === lastId);
      fail(
        EACH_EVENT_ONCE,
        `${name}: ${newest.type} ${newest.eventId} (v${versionOf(newest) ?? '?'}), its entity's newest event, is not the claim on ${pk}: it holds ` +
          `${String(lastId)} at seq ${String(seq)}${held === undefined ? ', not an event of this entity' : ', an older event'}: the newest was never applied, or an older one was applied over it`,
      );
    } else if (newest.event !== undefined) {
      const stored = item[SEQUENCE_ATTRIBUTES.fingerprint];
      if (fingerprintsDiffer(stored, eventFingerprint(newest.event)))
        fail(
          EVENT_REPLACED,
          `${name}: the claim on ${newest.type} ${newest.eventId} (${pk}) holds another event's content (fingerprint ${String(stored)}, produced ${eventFingerprint(newest.event)}): this event was not applied`,
        );
    }
    if (claims > taken.length)
      fail(
        EACH_EVENT_ONCE,
        `${name}: ${pk} records ${claims} claims for its entity's ${taken.length} event(s): an event was applied more than once, or a stale one over a newer`,
      );
    if (!owesCall) continue;
    const called = taken.filter((event) => Number(input.providerLog.get(keyOf(event))?.calls ?? 0) > 0);
    if (!called.includes(newest) && !input.optional?.has(keyOf(newest)))
      fail('provider', `no provider call under key ${keyOf(newest)}`);
    if (called.length > claims)
      fail(
        EACH_EVENT_ONCE,
        `${name}: ${called.length} of ${pk}'s events reached the provider, but ${claims} were claimed: a call with no claim behind it`,
      );
    for (const call of owedCallsOn(item))
      fail(
        'provider',
        `key ${String(call.providerKey)} is still owed on ${pk}: its call was never recorded done (${String(call.eventId)})`,
      );
  }
  return judged;
}

/**
 * Per sequenced consumer, the claims its entity items record for these events (0 for one that applied none).
 *
 * @example
 * ```ts
 * const applied = { ...countAppliedEffects(events, consumers, effects), ...countSequencedClaims(events, sequenced, effects) };
 * ```
 */
export function countSequencedClaims(
  events: readonly ProducedEvent[],
  consumers: readonly ConsumerSpec[],
  effects: ReadonlyMap<string, Record<string, unknown>>,
): Record<string, number> {
  const applied: Record<string, number> = {};
  for (const consumer of consumers) {
    applied[consumer.name] = 0;
    for (const pk of byEntityItem(events, consumer).keys())
      applied[consumer.name] += Number(effects.get(pk)?.[SEQUENCE_ATTRIBUTES.claims] ?? 0);
  }
  return applied;
}
