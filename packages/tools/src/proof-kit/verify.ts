import { eventIdOf } from '../dlq/messages';
import { envelopeOccurredAt } from '../dlq/horizon';
import { ChangeMessageVisibilityCommand, ReceiveMessageCommand, type Message } from '@aws-sdk/client-sqs';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  entityOfKey,
  localProviderLog,
  logOfEntities,
  providerCallItemsOf,
  providerFigures,
  providerLines,
  summarizeProviders,
  type ProviderFigures,
} from './provider-calls';
import {
  FINGERPRINT_ATTRIBUTE,
  inboxKey,
  PROVIDER_CALL_DONE_ATTRIBUTE,
  PROVIDER_KEY_ATTRIBUTE,
  SUPERSEDED_BY_ATTRIBUTE,
} from '@exactly-once/runtime/aws/inbox-table';
import { eventFingerprint, fingerprintsDiffer } from '@exactly-once/runtime/inbox/fingerprint';
import { inboxPk, KNOWN_KEY_SHAPES } from '@exactly-once/runtime/inbox/keys';
import { belongsToAnotherTenant, owedProviderKey } from '@exactly-once/runtime/aws/inbox-claim-keys';
import { consumerOutputNames, providerKey, type ConsumerSpec } from '@exactly-once/runtime/consumer-spec';
import { example, proofDomain } from '../example';
import { requiredOutput } from '../stack';
import { type EntityItem, type PerformedCall, type ProducedEvent, type ProofDomain, type Violation } from './domain';
import { appliedMetricViolations, judgeAppliedMetrics } from './metrics-check';
import type { Observation } from './drive';
import type { PlannedRequest } from './plan';
import type { Target } from './target';
import { STACK_OUTPUTS } from '@exactly-once/runtime/stack-outputs';

/**
 * Checks every invariant docs/proof-kit.md lists after a run, from the tables and the queues:
 * 1. entities = distinct (caller, Idempotency-Key) pairs that got a 201, and every
 *    201 for one key carried the same entity, in answer to the same body (a key
 *    sent again with another body must be refused, not answered with the first entity);
 * 2. the domain's invariants on its effects (`ProofDomain.checkEffects`; the shop: stock and points);
 * 3. every expected provider call was made under its key, once as an effect, and
 *    the inbox records it done, with the domain's own rules layered on
 *    (`providerRules`, `checkPerformed`; the shop: no PICK after CANCEL_PICK);
 * 4. every message is applied once or sits in a DLQ with its cause (only the
 *    kit's own poison is expected there; an EventIdReused copy is reported as
 *    `event-id-reused` and an event refused as stamped in the future as
 *    `occurred-in-future`, each for a person, never passed); nothing is left undispatched;
 * 5. each event once per consumer, for any consumer of the example's list:
 *    every event the outbox produced is claimed on the inbox of every consumer
 *    that takes its type, under its own content (`event-replaced` when the claim holds
 *    another event's fingerprint), its provider key was called, and never more than once
 *    without a claim behind it (see `checkEachEventOncePerConsumer`).
 * Each violation names the ids involved. What the kit knows of the domain is the example's
 * `ProofDomain` (packages/tools/src/proof-kit/domain.ts).
 */
export type { ProducedEvent, Violation } from './domain';

/** The cause a consumer dead-letters another event under a used eventId with. */
const EVENT_ID_REUSED = 'EventIdReused';
/** The cause a consumer refuses an event stamped beyond its clock-skew margin with. */
const OCCURRED_IN_FUTURE = 'OccurredInFuture';
/** The invariant a claim holding another event's content breaks: the produced event was not applied. */
export const EVENT_REPLACED = 'event-replaced';

/** The generic invariant's name: it holds for any consumer, whatever its effect. */
export const EACH_EVENT_ONCE = 'each-event-once-per-consumer';
/**
 * The invariant an event breaks when its consumer judged it superseded (stale) although no newer event of
 * its entity was produced, or when its entity's versions cannot order its events (two at one version):
 * the event was dropped, not overtaken.
 */
export const SUPERSEDED_WITHOUT_NEWER = 'superseded-without-newer-event';
/** The invariant a consumer breaks when it applied fewer events than it owes, counting each one lawfully superseded. */
export const APPLIED_FEWER = 'applied-fewer-than-owed';

export interface Verification {
  violations: Violation[];
  counts: {
    intents: number;
    /** The entities judged: this run's (or, verify-only, every one in the stack). */
    entities: number;
    providerKeys: number;
  };
  /** What the entities are called (`orders`) and what the domain's invariants checked (`8 cancelled; 40 SKUs, 30 customers`). */
  entityNoun: string;
  entityNounSingular: string;
  effectsChecked: string;
  duplicatesSuppressed: Record<string, number>;
  /**
   * Per consumer: the judged entities' events it applied, counted from what is stored (their inbox
   * claims, which commit with the effect). The metrics cannot give this: a crashed invocation dies
   * before it flushes them.
   */
  appliedEffects: Record<string, number>;
  /** Per consumer: EffectApplied, DuplicateSuppressed, StaleEventIgnored, PermanentFailure... where measured. */
  consumerMetrics: Record<string, Record<string, number>>;
  deadLetters: { queue: string; cause: string; count: number; expected: boolean }[];
  /**
   * Where the providers log what they performed (the local provider): one line per provider, what it
   * performed for this run's entities, counted at the provider. Absent for the recording double.
   */
  providerLines?: string[];
  /** Each provider's figures for the report's rows and chart, from the same log as `providerLines`. */
  providers?: ProviderFigures[];
}

/**
 * Reads the facts from the target's tables and dead-letter queues, then judges them with `checkInvariants`.
 * Every consumer's DLQ is read, found by its output name (`consumerOutputNames`).
 */
export async function verify(
  options: Omit<RunFacts, 'entities' | 'effectItems' | 'providerItems' | 'deadLetterQueues'> & {
    target: Target;
    /** Which entity-table items are judged; default: the domain's entities of `runId`. */
    isJudged?: (item: EntityItem) => boolean;
  },
): Promise<Verification> {
  const { target, runId } = options;
  const consumers = options.consumers ?? example().consumers;
  const domain = options.domain ?? proofDomain();
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
        providerLines: providerLines(summarizeProviders(runLog), entities.length),
        providers: providerFigures(runLog),
      };
}

/**
 * What the invariants are judged on, as plain data: the run's requests and
 * answers, and what the tables and dead-letter queues hold after the drain.
 * The proof kit reads it from a stack; the simulation (test/simulation) builds
 * it from its in-memory world, so both are judged by the same checks.
 */
export interface RunFacts {
  /** Only entities of this run are judged; '' judges every entity in the stack (verify-only mode). */
  runId: string;
  /** False in verify-only mode: there are no observed 201s to hold the orders against. */
  checkIntents?: boolean;
  plan: readonly PlannedRequest[];
  observations: readonly Observation[];
  entityIdOf: (caller: string, key: string) => string;
  isPoison: (body: string) => boolean;
  pendingOutbox: number;
  /** Consumer metrics measured over the run (DuplicateSuppressed{consumer=...} etc.), where the target can measure them. */
  metrics?: Record<string, number>;
  /** The entities of this run, as the entity table holds them. */
  entities: EntityItem[];
  effectItems: Record<string, unknown>[];
  providerItems: Record<string, unknown>[];
  /** The effects the local provider performed (its log), where the target has one. */
  performedEffects?: PerformedCall[];
  /** Its endpoints that ignore the idempotency key. */
  keylessProviders?: string[];
  deadLetterQueues: { name: string; messages: Message[] }[];
  /** Who consumes what; the deployed list unless a test judges another. */
  consumers?: readonly ConsumerSpec[];
  /** The domain judged; the example's unless a test judges another. */
  domain?: ProofDomain;
}

/** The invariant checks, pure: no I/O, same answer for the same facts. */
export function checkInvariants(options: RunFacts): Verification {
  const { runId, entities } = options;
  const domain = options.domain ?? proofDomain();
  const consumers = options.consumers ?? example().consumers;
  const violations: Violation[] = [];

  // 1. Intents: keys that got a 201, and what each 201 said.
  const intents = new Map<
    string,
    { caller: string; key: string; bodies: Set<string>; requests: Set<string>; entityIds: Set<string> }
  >();
  const unanswered = new Set<string>();
  for (const observation of options.observations) {
    const planned = options.plan[observation.index];
    if (planned.op === 'new' || planned.op === 'retry-sequential' || planned.op === 'retry-concurrent') {
      const id = `${planned.caller} ${planned.idempotencyKey}`;
      if (observation.status === 'no-response') unanswered.add(id);
      if (observation.status !== 201) continue;
      const intent = intents.get(id) ?? {
        caller: planned.caller,
        key: planned.idempotencyKey!,
        bodies: new Set(),
        requests: new Set(),
        entityIds: new Set(),
      };
      intent.bodies.add(observation.body ?? '');
      if (planned.body !== undefined) intent.requests.add(JSON.stringify(planned.body));
      intent.entityIds.add(domain.idOf(JSON.parse(observation.body ?? '{}')));
      intents.set(id, intent);
    }
  }
  const entitiesById = new Map(entities.map((e) => [domain.idOf(e), e]));
  const expectedEntityIds = new Set<string>();
  for (const [id, intent] of intents) {
    const entityId = options.entityIdOf(intent.caller, intent.key);
    expectedEntityIds.add(entityId);
    if (intent.bodies.size > 1)
      violations.push({ invariant: 'replay', detail: `key ${id}: ${intent.bodies.size} different 201 bodies` });
    if (intent.requests.size > 1)
      violations.push({
        invariant: 'replay',
        detail: `key ${id}: 201 for ${intent.requests.size} different request bodies`,
      });
    if (intent.entityIds.size !== 1 || !intent.entityIds.has(entityId)) {
      violations.push({
        invariant: 'orders',
        detail: `key ${id}: 201 named ${[...intent.entityIds].join(', ')}, expected ${entityId}`,
      });
    }
    if (!entitiesById.has(entityId))
      violations.push({ invariant: 'orders', detail: `key ${id}: got 201 but ${entityId} is missing` });
  }
  // A run without a single 201 has no intents and no entities, and 0 == 0 would pass: it proves nothing.
  if (options.checkIntents !== false && intents.size === 0)
    violations.push({ invariant: 'orders', detail: 'no POST got a 201: a run without intents proves nothing' });
  for (const entityId of entitiesById.keys()) {
    if (options.checkIntents === false || expectedEntityIds.has(entityId)) continue;
    const planned = options.plan.find(
      (p) => p.idempotencyKey !== undefined && options.entityIdOf(p.caller, p.idempotencyKey) === entityId,
    );
    const id = planned ? `${planned.caller} ${planned.idempotencyKey}` : '?';
    // An entity whose every request lost its answer (connection error) is not a double, but it is unconfirmed.
    if (!unanswered.has(id))
      violations.push({
        invariant: 'orders',
        detail: `${entityId} exists but no request for its key got a 201`,
      });
  }

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
  // Suppressed duplicates: the consumers' own DuplicateSuppressed metric where measured; otherwise a
  // lower bound from the provider log (repeat calls under one key; a crash before the provider hides some).
  const duplicatesSuppressed: Record<string, number> = {};
  const providerRepeats: Record<string, number> = {};
  for (const [key, calls] of providerKeys) {
    const consumer = key.split(':')[0];
    providerRepeats[consumer] = (providerRepeats[consumer] ?? 0) + Math.max(0, calls - 1);
  }
  const consumerMetrics: Record<string, Record<string, number>> = {};
  for (const [key, value] of Object.entries(options.metrics ?? {})) {
    const match = /^(\w+)\{consumer=([\w-]+)\}$/.exec(key); // consumer names may have hyphens
    if (match === null) continue;
    consumerMetrics[match[2]] = { ...consumerMetrics[match[2]], [match[1]]: value };
  }
  for (const consumer of new Set([...Object.keys(providerRepeats), ...Object.keys(consumerMetrics)])) {
    duplicatesSuppressed[consumer] = consumerMetrics[consumer]?.DuplicateSuppressed ?? providerRepeats[consumer] ?? 0;
  }
  const appliedEffects = countAppliedEffects(domain.producedEvents(entities), consumers, effects);
  // The metrics may fall short of the stored claims (a crash flushes none), never exceed them.
  violations.push(...appliedMetricViolations(judgeAppliedMetrics(consumerMetrics, appliedEffects)));

  // 4. Dead letters by cause; only our poison is expected. And nothing left in the outbox.
  const deadLetters: Verification['deadLetters'] = [];
  for (const { name, messages } of options.deadLetterQueues) {
    const byCause = new Map<string, { count: number; expected: boolean }>();
    for (const message of messages) {
      const body = message.Body ?? '';
      // Not this run's (an earlier run, or other traffic on the same stack): listed, not judged.
      if (runId !== '' && !options.isPoison(body) && !body.includes(`${runId}-`)) {
        const label = 'from before this run (not judged)';
        const entry = byCause.get(label) ?? { count: 0, expected: true };
        entry.count += 1;
        byCause.set(label, entry);
        continue;
      }
      const poison = options.isPoison(body);
      const cause = message.MessageAttributes?.failureCause?.StringValue ?? 'moved after maxReceiveCount';
      const label = poison ? `poison (${cause})` : cause;
      // Poison belongs in a DLQ however it got there: copied with its cause, or moved by SQS after
      // maxReceiveCount when crashes kept failing its batch (then possibly next to its copies).
      const entry = byCause.get(label) ?? { count: 0, expected: poison };
      entry.count += 1;
      byCause.set(label, entry);
      if (cause === EVENT_ID_REUSED) {
        // Caught, not swallowed: still never a pass. A person compares the two events (the runbook).
        const stored = message.MessageAttributes?.storedFingerprint?.StringValue ?? '?';
        const delivered = message.MessageAttributes?.deliveredFingerprint?.StringValue ?? '?';
        violations.push({
          invariant: 'event-id-reused',
          detail: `${name}: message ${message.MessageId}: another event under eventId ${eventIdOf(body) ?? '?'} (stored fingerprint ${stored}, delivered ${delivered}): for a person to look at`,
        });
      } else if (cause === OCCURRED_IN_FUTURE) {
        // Refused, not applied: its producer's clock is wrong. A person fixes the clock, then redrives it.
        violations.push({
          invariant: 'occurred-in-future',
          detail: `${name}: message ${message.MessageId}: eventId ${eventIdOf(body) ?? '?'} stamped ${envelopeOccurredAt(body) ?? '?'}, beyond the clock-skew margin: for a person to look at`,
        });
      } else if (!poison) {
        violations.push({
          invariant: 'dlq',
          detail: `${name}: message ${message.MessageId} (${cause}): ${body.slice(0, 160)}`,
        });
      }
    }
    for (const [cause, { count, expected }] of byCause) deadLetters.push({ queue: name, cause, count, expected });
  }
  if (options.pendingOutbox > 0)
    violations.push({ invariant: 'outbox', detail: `${options.pendingOutbox} outbox items never dispatched` });

  return {
    violations,
    counts: { intents: intents.size, entities: entities.length, providerKeys: providerKeys.size },
    entityNoun: domain.entityNoun,
    entityNounSingular: domain.entityNounSingular,
    effectsChecked: domainCheck.summary,
    duplicatesSuppressed,
    appliedEffects,
    consumerMetrics,
    deadLetters,
  };
}

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
function owedClaim(
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

/** The events the outbox produced for these entities, as the domain says (the one place the kit learns it). */
export function producedEvents(entities: readonly EntityItem[], domain: ProofDomain = proofDomain()): ProducedEvent[] {
  return domain.producedEvents(entities);
}

/**
 * Each event once per consumer, for any consumer on the list: for every
 * produced event and every consumer whose spec takes its type,
 * - its inbox claim `INBOX#<consumer>#<eventId>` (with its tenant, if it has one) exists: the event was applied,
 *   and the claim is what makes a second delivery a no-op; or its entry is marked superseded by a later
 *   event of its entity (a stale event, judged and not applied: the generic effect's version guard);
 * - the provider log has its key `providerKey(consumer, event)` (with its tenant), unless its entry is superseded
 *   (reported under `provider`, as the provider checks always were);
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
 * `optional`: keys a consumer's own rule lets go unapplied. Returns the keys owed.
 * Claims expire with the inbox TTL (weeks): verify-only over orders older than
 * that reports their claims missing, naming each one.
 */
export function checkEachEventOncePerConsumer(input: {
  events: readonly ProducedEvent[];
  consumers: readonly ConsumerSpec[];
  effects: ReadonlyMap<string, Record<string, unknown>>;
  providerLog: ReadonlyMap<string, Record<string, unknown>>;
  optional?: ReadonlySet<string>;
}): { violations: Violation[]; owedKeys: Set<string> } {
  const violations: Violation[] = [];
  const owedKeys = new Set<string>();
  const tally = new Map(input.consumers.map((c) => [c.name, { owed: 0, claimed: 0, superseded: 0, dropped: 0 }]));
  const shared = sharedVersions(input.events, input.consumers);
  violations.push(...shared.violations);
  for (const event of input.events) {
    for (const consumer of input.consumers) {
      if (!consumer.eventTypes.includes(event.type)) continue;
      const owed = owedClaim(input.effects, consumer.name, event);
      // The key its claim recorded (an older release's claim: `<consumer>:<eventId>`).
      const key = owed.key;
      if (input.optional?.has(key) || input.optional?.has(providerKey(consumer.name, event))) continue;
      owedKeys.add(key);
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
  return { violations, owedKeys };
}

/** A produced event's version: the field, else the rebuilt event's; undefined when the domain gives neither. */
const versionOf = (event: ProducedEvent): number | undefined => event.version ?? event.event?.version;

/**
 * A produced event of the same entity and tenant that lawfully supersedes `event`: a higher version
 * where both are known; where the domain gives no versions, any other event of the entity.
 */
function newerEventOf(event: ProducedEvent, events: readonly ProducedEvent[]): ProducedEvent | undefined {
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
function sharedVersions(
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
  consumers: readonly ConsumerSpec[] = example().consumers,
  domain: ProofDomain = proofDomain(),
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
  const optional = rules.optional;
  violations.push(...rules.violations);
  const generic = checkEachEventOncePerConsumer({
    events,
    consumers,
    effects: input.effects,
    providerLog: log,
    optional,
  });
  violations.push(...generic.violations);
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
  keyless: readonly string[] = [],
  domain: ProofDomain = proofDomain(),
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
    if (keyless.includes(effect.endpoint)) atLeastOnce.add(effect.key);
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
    if (!keyless.includes(endpoint))
      violations.push({
        invariant: 'provider-effects',
        detail: `${endpoint}: ${n} effect(s) performed without an Idempotency-Key`,
      });
  violations.push(...(domain.checkPerformed?.(performed) ?? []));
  return violations;
}

/** Every item of a table, page by page, strongly consistent (the verification and the tests read tables this way). */
export async function scan(documents: DynamoDBDocumentClient, tableName: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await documents.send(
      new ScanCommand({ TableName: tableName, ExclusiveStartKey: startKey, ConsistentRead: true }),
    );
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
  return items;
}

/** Reads every message of a queue without consuming it (each is made visible again right after). */
async function peekAll(target: Target, queueUrl: string): Promise<Message[]> {
  const seen = new Map<string, Message>();
  for (let round = 0; round < 100; round++) {
    const { Messages = [] } = await target.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        VisibilityTimeout: 20,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
      }),
    );
    const fresh = Messages.filter((m) => !seen.has(m.MessageId!));
    if (fresh.length === 0) break;
    for (const m of fresh) seen.set(m.MessageId!, m);
  }
  await Promise.all(
    [...seen.values()].map((m) =>
      target.sqs.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: queueUrl,
          ReceiptHandle: m.ReceiptHandle,
          VisibilityTimeout: 0,
        }),
      ),
    ),
  );
  return [...seen.values()];
}
