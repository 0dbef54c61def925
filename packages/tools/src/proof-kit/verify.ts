import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  entityOfKey,
  localProviderLog,
  logOfEntities,
  providerCallItemsOf,
  providerFigures,
  providerLines,
  summarizeProviders,
} from './provider-calls';
import {
  FINGERPRINT_ATTRIBUTE,
  PROVIDER_CALL_DONE_ATTRIBUTE,
  SUPERSEDED_BY_ATTRIBUTE,
} from '@exactly-once/runtime/aws/inbox-table';
import { eventFingerprint, fingerprintsDiffer } from '@exactly-once/runtime/inbox/fingerprint';
import { consumerOutputNames, ledgerOf, providerKey, type ConsumerSpec } from '@exactly-once/runtime/consumer-spec';
import { proofDomainOf } from '../domain-parts';
import { requiredOutput } from '../stack';
import { type EntityItem, type PerformedCall, type ProducedEvent, type ProofDomain, type Violation } from './domain';
import { judgeDeadLetters } from './dead-letter-verdicts';
import {
  APPLIED_FEWER,
  countAppliedEffects,
  EACH_EVENT_ONCE,
  EVENT_REPLACED,
  inboxEntriesOf,
  newerEventOf,
  owedClaim,
  sharedVersions,
  SUPERSEDED_WITHOUT_NEWER,
  versionOf,
} from './inbox-claims';
import { judgeIntents } from './judge-intents';
import { checkSequencedConsumer, countSequencedClaims } from './sequenced-claims';
import type { Verification } from './verification';
import { appliedMetricViolations, duplicatesOf, judgeAppliedMetrics } from './metrics-check';
import { peekAll, scan } from './stack-reads';
import type { RunFacts } from './run-facts';
import type { Target } from './target';
import { STACK_OUTPUTS } from '@exactly-once/runtime/stack-outputs';

export type { RunFacts } from './run-facts';

/**
 * Checks every invariant docs/proof-kit.md lists after a run, from the tables and the queues:
 * 1. entities = distinct (caller, Idempotency-Key) pairs that got a 201, and every
 *    201 for one key carried the same entity, in answer to the same body (a key
 *    sent again with another body must be refused, not answered with the first entity);
 * 2. the domain's invariants on its effects (`ProofDomain.checkEffects`; the shop: stock and points);
 * 3. every expected provider call (one per event, for each consumer whose spec names a provider) was
 *    made under its key, once as an effect, and
 *    the inbox records it done, with the domain's own rules layered on
 *    (`providerRules`, `checkPerformed`; the shop: no PICK after CANCEL_PICK);
 * 4. every message is applied once or sits in a DLQ with its cause (only the
 *    kit's own poison is expected there; an EventIdReused copy is reported as
 *    `event-id-reused` and an event refused as stamped in the future as
 *    `occurred-in-future`, each for a person, never passed); nothing is left undispatched;
 * 5. each event once per consumer, for any consumer of the example's list:
 *    every event the outbox produced is claimed on the inbox of every consumer
 *    that takes its type, under its own content (`event-replaced` when the claim holds
 *    another event's fingerprint), whether or not the consumer names a provider; where it names one,
 *    its provider key was called, and never more than once without a claim behind it
 *    (see `checkEachEventOncePerConsumer`).
 * Each violation names the ids involved. What the kit knows of the domain is the example's
 * `ProofDomain` (packages/tools/src/proof-kit/domain.ts).
 */
export type { ProducedEvent, Violation } from './domain';
export {
  APPLIED_FEWER,
  countAppliedEffects,
  EACH_EVENT_ONCE,
  EVENT_REPLACED,
  inboxEntriesOf,
  SUPERSEDED_WITHOUT_NEWER,
} from './inbox-claims';
export { scan } from './stack-reads';
export type { DeadLetterTally } from './dead-letter-verdicts';
export type { Verification } from './verification';

/**
 * Reads the facts from the target's tables and dead-letter queues, then judges them with `checkInvariants`.
 * Every consumer's DLQ is read, found by its output name (`consumerOutputNames`).
 */
export async function verify(
  options: Omit<RunFacts, 'entities' | 'effectItems' | 'providerItems' | 'deadLetterQueues' | 'consumers' | 'domain'> &
    Partial<Pick<RunFacts, 'consumers' | 'domain'>> & {
      /** The stack, its clients and its domain: `consumers` and `domain` are the target's unless given. */
      target: Target;
      /** Which entity-table items are judged; default: the domain's entities of `runId`. */
      isJudged?: (item: EntityItem) => boolean;
    },
): Promise<Verification> {
  const { target, runId } = options;
  const consumers = options.consumers ?? target.domain.consumers;
  const domain = options.domain ?? proofDomainOf(target.domain);
  const documents = DynamoDBDocumentClient.from(target.dynamodb);
  const entities = (await scan(documents, requiredOutput(target.outputs, domain.entityTableOutput))).filter(
    (i) => domain.isEntityOfRun(i, runId) && (options.isJudged?.(i) ?? true),
  );
  const effectItems = await scan(documents, target.outputs[STACK_OUTPUTS.effectsTableName]);
  const providerLog = await localProviderLog(target.outputs);
  const providerItems =
    providerLog !== undefined
      ? providerCallItemsOf(providerLog)
      : await scan(documents, target.outputs[STACK_OUTPUTS.providerLogTableName]);
  const deadLetterQueues: RunFacts['deadLetterQueues'] = [];
  for (const [name, url] of [
    ...consumers.map((c) => [
      `${c.name} DLQ`,
      requiredOutput(target.outputs, consumerOutputNames(c.name).deadLetterQueueUrl),
    ]),
    ['relay on-failure queue', target.outputs[STACK_OUTPUTS.relayFailureQueueUrl]],
  ]) {
    deadLetterQueues.push({ name, messages: await peekAll(target, url) });
  }
  const runLog =
    providerLog === undefined ? undefined : logOfEntities(providerLog, new Set(entities.map(domain.idOf)), domain);
  const verification = checkInvariants({
    ...options,
    consumers,
    domain,
    entities,
    effectItems,
    providerItems,
    deadLetterQueues,
    performedEffects: runLog?.performed,
    keylessProviders: runLog?.keyless,
  });
  return runLog === undefined
    ? verification
    : {
        ...verification,
        providerLines: providerLines(summarizeProviders(runLog), entities.length, domain),
        providers: providerFigures(runLog),
      };
}

/** The invariant checks, pure: no I/O, same answer for the same facts. */
export function checkInvariants(options: RunFacts): Verification {
  const { runId, entities } = options;
  const { domain, consumers } = options;
  const violations: Violation[] = [];

  // 1. Intents: keys that got a 201, and what each 201 said.
  const entitiesById = new Map(entities.map((e) => [domain.idOf(e), e]));
  const intents = judgeIntents(options, domain, entitiesById);
  violations.push(...intents.violations);

  // 2. The domain's invariants on its effects.
  const effects = new Map(options.effectItems.map((i) => [String(i.pk), i]));
  const domainCheck = domain.checkEffects(entities, effects);
  violations.push(...domainCheck.violations);

  // 3. Provider calls: one completed call per expected key, and the domain's own rules.
  const providerItems = options.providerItems.filter((i) => entitiesById.has(entityOfKey(String(i.idempotencyKey))));
  const providerKeys = new Map(providerItems.map((i) => [String(i.idempotencyKey), Number(i.calls ?? 0)]));
  const performed = options.performedEffects?.filter((e) => e.key !== null && entitiesById.has(entityOfKey(e.key)));
  violations.push(
    ...checkProviderCalls(
      { entities, effects, providerItems, performed, keyless: options.keylessProviders },
      consumers,
      domain,
    ),
  );
  const { duplicatesSuppressed, consumerMetrics } = duplicatesOf(providerKeys, options.metrics);
  const produced = domain.producedEvents(entities);
  const appliedEffects = {
    ...countAppliedEffects(produced, consumers, effects),
    ...countSequencedClaims(produced, consumers.filter(isSequenced), effects),
  };
  // The metrics may fall short of the stored claims (a crash flushes none), never exceed them.
  violations.push(...appliedMetricViolations(judgeAppliedMetrics(consumerMetrics, appliedEffects)));

  // 4. Dead letters by cause; only our poison is expected. And nothing left in the outbox.
  const dead = judgeDeadLetters(options.deadLetterQueues, runId, options.isPoison);
  violations.push(...dead.violations);
  if (options.pendingOutbox > 0)
    violations.push({ invariant: 'outbox', detail: `${options.pendingOutbox} outbox items never dispatched` });

  return {
    violations,
    counts: { intents: intents.intents, entities: entities.length, providerKeys: providerKeys.size },
    entityNoun: domain.entityNoun,
    entityNounSingular: domain.entityNounSingular,
    effectsChecked: domainCheck.summary,
    duplicatesSuppressed,
    appliedEffects,
    consumerMetrics,
    deadLetters: dead.deadLetters,
  };
}

/** Whether a consumer's claims live on its entity items (ConsumerSpec.ledger), not in an inbox. */
const isSequenced = (consumer: ConsumerSpec): boolean => ledgerOf(consumer) === 'sequenced';

/** The events the outbox produced for these entities, as the domain says (the one place the kit learns it). */
export function producedEvents(entities: readonly EntityItem[], domain: ProofDomain): ProducedEvent[] {
  return domain.producedEvents(entities);
}

/**
 * Each event once per consumer, for any consumer on the list: for every
 * produced event and every consumer whose spec takes its type,
 * - its inbox claim `INBOX#<consumer>#<eventId>` (with its tenant, if it has one) exists: the event was applied,
 *   and the claim is what makes a second delivery a no-op; or its entry is marked superseded by a later
 *   event of its entity (a stale event, judged and not applied: the generic effect's version guard);
 * - for a consumer whose spec names a provider (`ConsumerSpec.providers`), the provider log has its key
 *   `providerKey(consumer, event)` (with its tenant), unless its entry is superseded (reported under
 *   `provider`, as the provider checks always were). A consumer that names none owes no call: its claim
 *   is the whole proof of its effect, and a call under its key is one nobody owes;
 * - a key called more than once with no claim behind it is a double effect:
 *   nothing deduplicated it. With the claim, a repeat under the key is the owed
 *   call retried (a duplicate that came before the call was recorded done),
 *   which the key makes harmless; the report counts it as a suppressed duplicate;
 * - an entry marked superseded and never claimed counts only when a newer event of its entity (same
 *   tenant) was produced: a higher version where both versions are known,
 *   another event of the entity otherwise. Else the event was dropped as stale against nothing newer
 *   (`superseded-without-newer-event`), which is what a version guard does to an entity whose
 *   versions are not its own (a fork that made its ordering key the entityId); two events of one
 *   entity at one version are reported the same way, since no version guard can order them;
 * - per consumer, a run in which events were dropped so sums them up against what it owes
 *   (`applied-fewer-than-owed`: "applied 10 of the 200 events it owes"): such a run never passes.
 * A consumer on the sequenced ledger (ConsumerSpec.ledger) keeps its claims on its entity items, and is
 * judged by them instead (sequenced-claims.ts `checkSequencedConsumer`): the newest event of each entity
 * is the item's claim, no more claims than events, no call left owed.
 * `optional`: keys a consumer's own rule lets go unapplied. Returns the provider keys owed, and the keys
 * that may be called at most once (a sequenced consumer's older events: applied, or judged stale).
 * Inbox claims expire with the inbox TTL (weeks): verify-only over orders older than
 * that reports their claims missing, naming each one.
 */
export function checkEachEventOncePerConsumer(input: {
  events: readonly ProducedEvent[];
  consumers: readonly ConsumerSpec[];
  effects: ReadonlyMap<string, Record<string, unknown>>;
  providerLog: ReadonlyMap<string, Record<string, unknown>>;
  optional?: ReadonlySet<string>;
}): { violations: Violation[]; owedKeys: Set<string>; mayOweKeys: Set<string> } {
  const violations: Violation[] = [];
  const owedKeys = new Set<string>();
  const mayOweKeys = new Set<string>();
  // A sequenced consumer's event with an inbox entry was applied by the inbox ledger the consumer ran before
  // (an upgraded stack finishes the entities it began there): judged by the inbox rules, where it was applied.
  const inInbox = (consumer: ConsumerSpec, event: ProducedEvent) =>
    !isSequenced(consumer) || owedClaim(input.effects, consumer.name, event).entry !== undefined;
  const inboxConsumers = input.consumers;
  const tally = new Map(inboxConsumers.map((c) => [c.name, { owed: 0, claimed: 0, superseded: 0, dropped: 0 }]));
  const shared = sharedVersions(input.events, input.consumers);
  violations.push(...shared.violations);
  for (const consumer of input.consumers.filter(isSequenced)) {
    const events = input.events.filter((event) => !inInbox(consumer, event));
    const judged = checkSequencedConsumer({ ...input, events, consumer });
    violations.push(...judged.violations);
    for (const key of judged.owedKeys) owedKeys.add(key);
    for (const key of judged.mayOweKeys) mayOweKeys.add(key);
  }
  for (const event of input.events) {
    for (const consumer of inboxConsumers) {
      if (!consumer.eventTypes.includes(event.type) || !inInbox(consumer, event)) continue;
      const owed = owedClaim(input.effects, consumer.name, event);
      // The key its claim recorded (an older release's claim: `<consumer>:<eventId>`).
      const key = owed.key;
      if (input.optional?.has(key) || input.optional?.has(providerKey(consumer.name, event))) continue;
      // Only a consumer whose spec names a provider owes it a call; every consumer owes its claim.
      const owesCall = (consumer.providers?.length ?? 0) > 0;
      if (owesCall) owedKeys.add(key);
      const claim = owed.pk;
      const claimed = owed.entry !== undefined;
      if (owed.claims > 1)
        violations.push({
          invariant: EACH_EVENT_ONCE,
          detail: `${consumer.name}: ${event.type} ${event.eventId} claimed under ${owed.claims} key shapes: applied once per release that did not find the other's claim`,
        });
      const count = tally.get(consumer.name)!;
      count.owed += 1;
      const entry = owed.entry;
      // A supersede mark alone (no claimedAt) is a verdict on the event, not its application.
      const markOnly = entry?.[SUPERSEDED_BY_ATTRIBUTE] !== undefined && entry.claimedAt === undefined;
      if (entry !== undefined && !markOnly) count.claimed += 1;
      else if (markOnly) {
        const newer = newerEventOf(event, input.events);
        // An event that shares its version with another of its entity cannot be told overtaken from dropped.
        if (newer !== undefined && !shared.eventIds.get(consumer.name)!.has(event.eventId)) count.superseded += 1;
        else if (newer !== undefined) count.dropped += 1;
        else {
          count.dropped += 1;
          violations.push({
            invariant: SUPERSEDED_WITHOUT_NEWER,
            detail: `${consumer.name}: ${event.type} ${event.eventId} (entity ${event.entityId}, version ${versionOf(event) ?? '?'}) is marked superseded by ${String(entry[SUPERSEDED_BY_ATTRIBUTE])}, but no newer event of its entity was produced: it was dropped as stale, never applied`,
          });
        }
      }
      if (!claimed)
        violations.push({
          invariant: EACH_EVENT_ONCE,
          detail: `${consumer.name}: ${event.type} ${event.eventId} has no inbox claim ${claim}: never applied, or applied without its claim`,
        });
      const stored = owed.entry?.[FINGERPRINT_ATTRIBUTE];
      // Only a fingerprint of this version can say "another event" (an older one hashed a consumer's parse).
      if (event.event !== undefined && fingerprintsDiffer(stored, eventFingerprint(event.event)))
        violations.push({
          invariant: EVENT_REPLACED,
          detail: `${consumer.name}: the claim on ${event.type} ${event.eventId} holds another event's content (fingerprint ${stored}, produced ${eventFingerprint(event.event)}): this event was not applied`,
        });
      if (!owesCall) continue;
      const calls = Number(input.providerLog.get(key)?.calls ?? 0);
      // Superseded: a later event of its entity reached the provider first, so this one owes no call.
      const superseded = owed.entry?.[SUPERSEDED_BY_ATTRIBUTE] !== undefined;
      if (calls === 0 && !superseded)
        violations.push({ invariant: 'provider', detail: `no provider call under key ${key}` });
      else if (calls > 1 && !claimed)
        violations.push({
          invariant: EACH_EVENT_ONCE,
          detail: `key ${key} called ${calls} times with no inbox claim to deduplicate: a double effect`,
        });
    }
  }
  // Events with no entry at all are reported one by one above; this sums up what was dropped as stale.
  for (const [name, { owed, claimed, superseded, dropped }] of tally)
    if (dropped > 0)
      violations.push({
        invariant: APPLIED_FEWER,
        detail: `${name}: applied ${claimed} of the ${owed} events it owes, ${superseded} more superseded by a newer event of their entity; ${dropped} marked superseded were dropped (no newer event of their entity, or one at their own version)${owed - claimed - superseded - dropped > 0 ? `, and ${owed - claimed - superseded - dropped} have no inbox entry at all` : ''}`,
      });
  return { violations, owedKeys, mayOweKeys };
}

/**
 * The provider invariants, from the entities, the Effects table (the domain's states and the inbox
 * entries, by pk) and the provider log (one item per key, as the recording provider keeps it: `calls`,
 * `firstCalledAt`, `lastCalledAt`):
 * - each event once per consumer (`checkEachEventOncePerConsumer`), for every
 *   consumer of `consumers`; no key outside what they owe reached the provider,
 *   and the consumer's inbox entry records each call done, or superseded by a
 *   later event of its entity;
 * - the domain's own rules, layered on the generic one (`ProofDomain.providerRules`): keys it lets go
 *   uncalled, and its ordering rules (the shop: a PICK may be absent when the cancel overtook it, and
 *   never follows its CANCEL_PICK).
 */
export function checkProviderCalls(
  input: {
    entities: readonly EntityItem[];
    effects: ReadonlyMap<string, Record<string, unknown>>;
    providerItems: readonly Record<string, unknown>[];
    /** What the provider performed (the local provider's log): judged per key, where it happened. */
    performed?: readonly PerformedCall[];
    /** Endpoints that ignore the key: a repeat there is the at-least-once residue, reported, not a violation. */
    keyless?: readonly string[];
  },
  consumers: readonly ConsumerSpec[],
  domain: ProofDomain,
): Violation[] {
  const violations: Violation[] = [];
  const log = new Map(input.providerItems.map((i) => [String(i.idempotencyKey), i]));
  const events = domain.producedEvents(input.entities);
  const tenantOf = new Map(events.map((e) => [e.eventId, e.tenant]));
  // Each event's entry by the key its call is owed under (two tenants' events may share an eventId: the
  // key's tenant hash tells them apart, the eventId alone does not).
  const entryByKey = new Map<string, Record<string, unknown>>();
  for (const event of events)
    for (const consumer of consumers) {
      if (!consumer.eventTypes.includes(event.type)) continue;
      const owed = owedClaim(input.effects, consumer.name, event);
      if (owed.entry !== undefined) entryByKey.set(owed.key, owed.entry);
    }
  const inbox = (key: string) => {
    const owed = entryByKey.get(key);
    if (owed !== undefined) return owed;
    // `<consumer>:<eventId>` or `<consumer>@<tenant hash>:<eventId>`: a consumer name has no colon or `@`,
    // the hash no colon, an event id may have colons (the probe fixture's do).
    const [head, ...rest] = key.split(':');
    const consumer = head.split('@')[0];
    const eventId = rest.join(':');
    return inboxEntriesOf(input.effects, consumer, { eventId, tenant: tenantOf.get(eventId) })[0]?.entry;
  };
  const rules = domain.providerRules?.({
    entities: input.entities,
    effects: input.effects,
    log,
    superseded: (key) => inbox(key)?.[SUPERSEDED_BY_ATTRIBUTE] !== undefined,
  }) ?? { optional: new Set<string>(), violations: [] };
  violations.push(...rules.violations);
  const generic = checkEachEventOncePerConsumer({
    events,
    consumers,
    effects: input.effects,
    providerLog: log,
    optional: rules.optional,
  });
  violations.push(...generic.violations);
  // A sequenced consumer's older events may each be called once, or not at all when judged stale.
  const optional = new Set([...rules.optional, ...generic.mayOweKeys]);
  for (const key of log.keys()) {
    if (!generic.owedKeys.has(key) && !optional.has(key)) {
      violations.push({ invariant: 'provider', detail: `unexpected provider call under key ${key}` });
      continue;
    }
    const entry = inbox(key);
    // No entry: expired (TTL) or never written (inbox switched off, reported by the generic check).
    if (
      entry !== undefined &&
      entry[PROVIDER_CALL_DONE_ATTRIBUTE] === undefined &&
      entry[SUPERSEDED_BY_ATTRIBUTE] === undefined
    )
      violations.push({
        invariant: 'provider',
        detail: `key ${key} reached the provider but the inbox does not record the call done`,
      });
  }
  if (input.performed !== undefined)
    violations.push(...checkPerformedEffects(input.performed, generic.owedKeys, optional, input.keyless, domain));
  return violations;
}

/**
 * At the provider itself: every owed key performed exactly once (an optional one at most once), no
 * effect under a key nobody owes (an entity never accepted, or an event nobody takes), no effect
 * without a key on a keyed provider, and the domain's rules on what was performed
 * (`ProofDomain.checkPerformed`; the shop: no PICK performed after its order's CANCEL_PICK).
 */
export function checkPerformedEffects(
  performed: readonly PerformedCall[],
  owedKeys: ReadonlySet<string>,
  optional: ReadonlySet<string>,
  keyless: readonly string[] | undefined,
  domain: Pick<ProofDomain, 'checkPerformed'>,
): Violation[] {
  const violations: Violation[] = [];
  const times = new Map<string, number>();
  const atLeastOnce = new Set<string>();
  const unkeyed = new Map<string, number>();
  for (const effect of performed) {
    if (effect.key === null) {
      unkeyed.set(effect.endpoint, (unkeyed.get(effect.endpoint) ?? 0) + 1);
      continue;
    }
    times.set(effect.key, (times.get(effect.key) ?? 0) + 1);
    if (keyless?.includes(effect.endpoint)) atLeastOnce.add(effect.key);
  }
  for (const key of owedKeys) {
    const n = times.get(key) ?? 0;
    // A keyless provider cannot dedupe a repeat: at least once there, and the repeats are counted in its line.
    if (n !== 1 && !(n > 1 && atLeastOnce.has(key)))
      violations.push({
        invariant: 'provider-effects',
        detail: `key ${key} performed ${n} times at the provider, not once`,
      });
  }
  for (const [key, n] of times) {
    if (owedKeys.has(key)) continue;
    if (!optional.has(key))
      violations.push({
        invariant: 'provider-effects',
        detail: `key ${key} performed ${n} times, but nothing owes it`,
      });
    else if (n > 1 && !atLeastOnce.has(key))
      violations.push({
        invariant: 'provider-effects',
        detail: `key ${key} performed ${n} times, at most once allowed`,
      });
  }
  // Nothing lets a keyed provider tell a retry of these from a new request: each retry is one more effect.
  for (const [endpoint, n] of unkeyed)
    if (!keyless?.includes(endpoint))
      violations.push({
        invariant: 'provider-effects',
        detail: `${endpoint}: ${n} effect(s) performed without an Idempotency-Key`,
      });
  violations.push(...(domain.checkPerformed?.(performed) ?? []));
  return violations;
}
