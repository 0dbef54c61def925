import { inboxKey } from '@exactly-once/runtime/aws/inbox-table';
import { providerKey, type ConsumerSpec } from '@exactly-once/runtime/consumer-spec';
import type { Violation } from '../../proof-kit/domain';
import { checkInvariants } from '../../proof-kit/verify';
import { eventIdOf } from '../../dlq/messages';
import { EVENT_ID_REUSED_CAUSE, isSentPoison } from '../../dlq/causes';
import type { SimulationResult, SimulationVerification } from '../contract';
import { FORGED_EVENT_ID_SUFFIX } from './dlq-forgery';
import type { SimulationOptions } from './options';
import type { SimMessage } from './sqs';
import { EFFECTS_TABLE } from './tables';
import type { EngineState } from './engine-state';
import type { Operator } from './operator';
import type { World } from './world';

/**
 * The audit of a finished schedule: the proof kit's own checks (`checkInvariants`, the pure half of
 * `verify`) fed with the simulated tables, provider log and DLQs, and what only the simulation can
 * see (audit-watch.ts): events past the dedupe horizon left for a person, messages expired
 * unprocessed, forged copies taken for the real event, claims of events nobody produced, double sends,
 * miscounted own commits, calls in flight at once under one key.
 */
export function audit(world: World<SimulationOptions>, engine: EngineState, operator: Operator): SimulationResult {
  const { scheduler } = world;
  const effectItems: Record<string, unknown>[] = [...world.db.storedItems(EFFECTS_TABLE)];
  // The inbox as the consumers wrote it: an entry DynamoDB's TTL deleted (weeks after its event, in
  // long runs) was still written, and judged as it was when deleted, unless it was written anew since.
  const live = new Set(effectItems.map((i) => String(i.pk)));
  for (const [pk, item] of operator.ttlDeleted) if (!live.has(pk) && pk.startsWith('INBOX#')) effectItems.push(item);
  const inbox = new Set(effectItems.map((i) => String(i.pk)));
  const pastHorizon: { queue: string; message: SimMessage; key: string }[] = [];
  const deadLetterQueues = [...world.consumers.values()].map(({ spec, deadLetterQueue }) => {
    const name = `${spec.name} DLQ`;
    const messages = deadLetterQueue.all().filter((message) => {
      const { eventId, tenant } = pastHorizonEvent(message) ?? {};
      if (eventId === undefined || !inbox.has(inboxKey(spec.name, eventId, tenant).pk)) return true;
      pastHorizon.push({ queue: name, message, key: providerKey(spec.name, { eventId, tenant }) });
      return false;
    });
    return { name, messages: messages.map(toMessage) };
  });
  const consumers = [...world.consumers.values()].map(({ spec }) => spec);
  const checked = checkInvariants({
    runId: '',
    // Judged by this world's consumer list, by the domain's own proof.
    consumers,
    domain: engine.domain.proof(consumers),
    checkIntents: true,
    plan: world.plan,
    observations: world.observations,
    entityIdOf: (caller, key) => engine.clients.entityIdOf(caller, key),
    // The poison fault's messages (faults.ts), which belong in the DLQs.
    isPoison: (body) => isSentPoison(body),
    pendingOutbox: engine.pendingOutbox,
    entities: engine.domain.entities(world.db),
    effectItems,
    providerItems: engine.providers.items(),
    deadLetterQueues: [
      ...deadLetterQueues,
      { name: 'relay on-failure queue', messages: world.relayFailures.all().map(toMessage) },
    ],
  });
  const verification: SimulationVerification = checked;
  // An event refused past the dedupe horizon whose effect was applied (its claim was written) sits
  // in its DLQ with its cause: invariant 5's "or sits in a DLQ with its cause", left for a person
  // (the effect to check by hand, its provider call to make if it is still owed). Judged here, since
  // only poison is expected in a DLQ otherwise; its owed provider call is that person's, not missing.
  const waiting = new Set(pastHorizon.map((p) => `no provider call under key ${p.key}`));
  verification.violations = verification.violations.filter(
    (v) => !(v.invariant === 'provider' && waiting.has(v.detail)) && !owedByNoProvider(v, consumers),
  );
  for (const queue of new Set(pastHorizon.map((p) => p.queue)))
    verification.deadLetters.push({
      queue,
      cause: 'DedupeHorizonPassed (applied before the horizon: for a person)',
      count: pastHorizon.filter((p) => p.queue === queue).length,
      expected: true,
    });
  verification.violations.push(...simulationFindings(world, engine, effectItems));
  const providerOverlaps = engine.providers.overlaps();
  for (const o of providerOverlaps)
    verification.violations.push({
      invariant: 'provider-overlap',
      detail: `key ${o.idempotencyKey}: ${o.maxInFlight} calls in flight at once (${o.pairs} overlapping pairs)`,
    });
  return {
    seed: world.options.seed,
    verification,
    traceHash: scheduler.traceHash(),
    trace: scheduler.traceTail(),
    faults: { ...scheduler.faults },
    consequences: { ...scheduler.consequences },
    events: scheduler.eventsRun,
    virtualSeconds: scheduler.now / 1000,
    requests: world.plan.length,
    unexpectedErrors: world.unexpectedErrors,
    providerOverlaps,
  };
}

/** What only the simulation sees: expired messages, forgeries that got through, double sends, miscounts. */
function simulationFindings(
  world: World<SimulationOptions>,
  engine: EngineState,
  effectItems: Record<string, unknown>[],
): Violation[] {
  const violations: Violation[] = [];
  // Retention: a message gone unprocessed, from a source queue or from a DLQ before anyone redrove it.
  const lost = [
    ...[...world.consumers.values()].flatMap((c) => [...c.queue.expired, ...c.deadLetterQueue.expired]),
    ...world.relayFailures.expired,
  ];
  for (const m of lost) violations.push({ invariant: 'dlq', detail: `message ${m.messageId} expired unprocessed` });
  for (const detail of lostToForgery(world, engine)) violations.push({ invariant: 'event-lost', detail });
  // An eventId no producer wrote (the `dlqForgeries` fault's new ids), claimed: an effect nobody produced.
  for (const item of effectItems)
    if (String(item.pk).endsWith(FORGED_EVENT_ID_SUFFIX) && item.claimedAt !== undefined)
      violations.push({
        invariant: 'unproduced-effect',
        detail: `${String(item.pk)}: applied, but no producer wrote this event (forged into a DLQ and redriven)`,
      });
  for (const detail of engine.watch.doubleSends) violations.push({ invariant: 'double-send', detail });
  for (const detail of engine.watch.miscounts) violations.push({ invariant: 'miscount', detail });
  return violations;
}

/**
 * A provider call the proof kit owes from a consumer whose spec names no provider: such a consumer's
 * effect is its inbox claim and its own writes, so no call is owed (its claim is still checked, under
 * `each-event-once-per-consumer`). Keys are `<consumer>:<eventId>` or `<consumer>@<tenant hash>:<eventId>`.
 */
function owedByNoProvider(violation: Violation, consumers: readonly ConsumerSpec[]): boolean {
  const prefix = 'no provider call under key ';
  if (violation.invariant !== 'provider' || !violation.detail.startsWith(prefix)) return false;
  const consumer = violation.detail.slice(prefix.length).split(':')[0].split('@')[0];
  const spec = consumers.find((c) => c.name === consumer);
  return spec !== undefined && (spec.providers ?? []).length === 0;
}

/**
 * A forged copy that reached a consumer and the real event share an id: one of the two was applied,
 * and the other must sit in the consumer's DLQ as EventIdReused, for a person. Neither there: one
 * was acknowledged as a duplicate of the other, and a real event may be gone without a trace.
 */
function lostToForgery(world: World<SimulationOptions>, engine: EngineState): string[] {
  const caught = new Set<string>();
  for (const { spec, deadLetterQueue } of world.consumers.values())
    for (const message of deadLetterQueue.all())
      if (message.attributes.failureCause === EVENT_ID_REUSED_CAUSE)
        caught.add(`${spec.name}\n${eventIdOf(message.body)}`);
  return [...engine.watch.forged]
    .filter((pair) => !caught.has(pair))
    .map((pair) => {
      const [consumer, eventId] = pair.split('\n');
      return `${consumer}: ${eventId} and a forged copy under its id: one was taken for a duplicate of the other`;
    });
}

/** A simulated message as the proof kit reads a DLQ's messages (ReceiveMessage's shape). */
function toMessage(m: SimMessage) {
  return {
    MessageId: m.messageId,
    Body: m.body,
    MessageAttributes: Object.fromEntries(
      Object.entries(m.attributes).map(([k, v]) => [k, { DataType: 'String', StringValue: v }]),
    ),
  };
}

/** The eventId of a DLQ message a consumer refused as older than its dedupe horizon. */
function pastHorizonEvent(message: SimMessage): { eventId: string; tenant?: string } | undefined {
  if (message.attributes.failureCause !== 'DedupeHorizonPassed') return undefined;
  try {
    const { eventId, tenant } = JSON.parse(message.body) as { eventId?: unknown; tenant?: unknown };
    if (typeof eventId !== 'string') return undefined;
    return typeof tenant === 'string' ? { eventId, tenant } : { eventId };
  } catch {
    return undefined;
  }
}
