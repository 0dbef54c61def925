import { inboxKey, PROVIDER_KEY_ATTRIBUTE } from '@exactly-once/runtime/aws/inbox-table';
import { inboxPk, KNOWN_KEY_SHAPES } from '@exactly-once/runtime/inbox/keys';
import { belongsToAnotherTenant, owedProviderKey } from '@exactly-once/runtime/aws/inbox-claim-keys';
import { providerKey, type ConsumerSpec } from '@exactly-once/runtime/consumer-spec';
import type { ProducedEvent, Violation } from './domain';

/**
 * Reading the consumers' inbox claims for the produced events (verify.ts judges them): an event's entries
 * under every key shape, the claim that stands for it and the provider key it owes, what each consumer
 * applied, and how the events of one entity order by version.
 */

/** The invariant a claim holding another event's content breaks: the produced event was not applied. */
export const EVENT_REPLACED = 'event-replaced';

/** The generic invariant's name: it holds for any consumer, whatever its effect. */
export const EACH_EVENT_ONCE = 'each-event-once-per-consumer';
/** The invariant a consumer breaks when it applied fewer events than it owes, counting each one lawfully superseded. */
export const APPLIED_FEWER = 'applied-fewer-than-owed';
/**
 * The invariant an event breaks when its consumer judged it superseded (stale) although no newer event of
 * its entity was produced, or when its entity's versions cannot order its events (two at one version):
 * the event was dropped, not overtaken.
 */
export const SUPERSEDED_WITHOUT_NEWER = 'superseded-without-newer-event';

/**
 * Per consumer, how many of these events its inbox records as claimed (0 for a consumer that applied
 * none). A claim carries `claimedAt`; an entry without it was only marked superseded by a later event
 * of its entity (the ledgers' `supersede`), so its own event was never applied.
 */
export function countAppliedEffects(
  events: readonly ProducedEvent[],
  consumers: readonly ConsumerSpec[],
  effects: ReadonlyMap<string, Record<string, unknown>>,
): Record<string, number> {
  const applied: Record<string, number> = {};
  for (const consumer of consumers) {
    applied[consumer.name] = events.filter(
      (event) =>
        consumer.eventTypes.includes(event.type) &&
        inboxEntriesOf(effects, consumer.name, event).some(({ entry }) => entry.claimedAt !== undefined),
    ).length;
  }
  return applied;
}

/**
 * An event's inbox entries for `consumer` under every key shape a release wrote (inbox/keys.ts), the
 * current shape first: a deploy or a rollback runs releases of other shapes, whose claims live under
 * their own keys. An entry a tenant-aware release wrote for another tenant's event (a shape-1 key has no
 * tenant) is not this event's.
 */
export function inboxEntriesOf(
  effects: ReadonlyMap<string, Record<string, unknown>>,
  consumer: string,
  event: Pick<ProducedEvent, 'eventId' | 'tenant'>,
): { pk: string; entry: Record<string, unknown> }[] {
  const pks = [...new Set(KNOWN_KEY_SHAPES.map((shape) => inboxPk(consumer, event, shape)))];
  return pks.flatMap((pk) => {
    const entry = effects.get(pk);
    return entry === undefined || belongsToAnotherTenant(entry, event) ? [] : [{ pk, entry }];
  });
}

/**
 * The entry that stands for an event's claim (a claimed one first, the current shape first) and the
 * provider key its call is owed under: the key the claim recorded, the older releases' key for a claim of
 * another shape that recorded none, else this release's key.
 */
export function owedClaim(
  effects: ReadonlyMap<string, Record<string, unknown>>,
  consumer: string,
  event: Pick<ProducedEvent, 'eventId' | 'tenant'>,
): { pk: string; entry?: Record<string, unknown>; key: string; claims: number } {
  const entries = inboxEntriesOf(effects, consumer, event);
  const claimed = entries.filter(({ entry }) => entry.claimedAt !== undefined);
  const found = claimed[0] ?? entries[0];
  const current = inboxKey(consumer, event.eventId, event.tenant).pk;
  if (found === undefined) return { pk: current, key: providerKey(consumer, event), claims: 0 };
  const key = found.pk === current ? providerKey(consumer, event) : owedProviderKey(consumer, event, found.entry);
  const recorded = found.entry[PROVIDER_KEY_ATTRIBUTE];
  return {
    ...found,
    key: typeof recorded === 'string' ? recorded : key,
    claims: claimed.length,
  };
}

/** A produced event's version: the field, else the rebuilt event's; undefined when the domain gives neither. */
export const versionOf = (event: ProducedEvent): number | undefined => event.version ?? event.event?.version;

/**
 * A produced event of the same entity and tenant that lawfully supersedes `event`: a higher version
 * where both are known; where the domain gives no versions, any other event of the entity.
 */
export function newerEventOf(event: ProducedEvent, events: readonly ProducedEvent[]): ProducedEvent | undefined {
  const version = versionOf(event);
  return events.find((other) => {
    if (other.eventId === event.eventId || other.entityId !== event.entityId || other.tenant !== event.tenant)
      return false;
    const otherVersion = versionOf(other);
    return version === undefined || otherVersion === undefined || otherVersion > version;
  });
}

/**
 * Two produced events of one entity (and tenant) at one version, both taken by a consumer: a version guard
 * cannot order them, and one of them is judged stale against the other. The sign of an entity whose
 * versions are not its own (the entityId made the ordering key while the versions stayed another's).
 */
export function sharedVersions(
  events: readonly ProducedEvent[],
  consumers: readonly ConsumerSpec[],
): { violations: Violation[]; eventIds: Map<string, Set<string>> } {
  const violations: Violation[] = [];
  const eventIds = new Map(consumers.map((c) => [c.name, new Set<string>()]));
  for (const consumer of consumers) {
    const slots = new Map<string, ProducedEvent[]>();
    for (const event of events) {
      const version = versionOf(event);
      if (version === undefined || !consumer.eventTypes.includes(event.type)) continue;
      const slot = `${event.tenant ?? ''}\n${event.entityId}\n${version}`;
      slots.set(slot, [...(slots.get(slot) ?? []), event]);
    }
    for (const same of slots.values()) {
      if (same.length < 2) continue;
      for (const event of same) eventIds.get(consumer.name)!.add(event.eventId);
      violations.push({
        invariant: SUPERSEDED_WITHOUT_NEWER,
        detail: `${consumer.name}: ${same.length} events are version ${versionOf(same[0])} of entity ${same[0].entityId} (${same
          .slice(0, 3)
          .map((e) => e.eventId)
          .join(
            ', ',
          )}${same.length > 3 ? ', ...' : ''}): a version guard keeps one of them and drops the rest as stale. Versions must order one entity's events; an ordering shared by several entities is the envelope's orderingKey, not its entityId`,
      });
    }
  }
  return { violations, eventIds };
}
