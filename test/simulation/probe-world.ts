import type { ConsumerSpec } from '@exactly-once/runtime';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { entityEffectKey, inboxKey, SUPERSEDED_BY_ATTRIBUTE } from '@exactly-once/runtime/aws/inbox-table';
import { SEQUENCE_ATTRIBUTES, sequencedEntityKey } from '@exactly-once/runtime/aws/sequenced-ledger';
import type { EntityItem, ProducedEvent, ProofDomain, Violation } from '@exactly-once/tools/proof-kit/domain';
import type { PlannedRequest } from '@exactly-once/tools/proof-kit/plan';
import { intBetween, pick } from '@exactly-once/tools/proof-kit/random';
import type { SimulationResult } from '@exactly-once/tools/simulation/contract';
import { simulatedIdempotencyStore } from '@exactly-once/tools/simulation/world/api';
import { FunctionTimeout, ServiceUnavailable, SimulatedCrash } from '@exactly-once/tools/simulation/world/invocation';
import {
  ENGINE_DEFAULTS,
  simulate as simulateWorld,
  simulatedWorld,
  World as EngineWorld,
  type ApiClient,
  type ApiPost,
  type DomainClients,
  type SimulationDomain,
  type SimulationOptions,
} from '@exactly-once/tools/simulation/world/world';
import { thingHappened, type ProbeEvent } from '../exactly-once/fixtures/probe-events';
import { PROBE_EVENT_TYPES } from '../exactly-once/fixtures/probe-spec';
import {
  accountOf,
  CREATE_THING_TIMEOUT_SECONDS,
  deriveThingId,
  makeCreateThingHandler,
  thingEvents,
  PROBE_SIMULATED_CONSUMERS,
  THING_PK_PREFIX,
  THINGS_TABLE,
  undoThing,
  type EventNaming,
  type ThingItem,
  type ThingRequest,
} from '../exactly-once/fixtures/probe-simulation';

/**
 * The neutral fixture as the simulation engine's plug-in (packages/tools/src/simulation/world/world.ts): clients
 * make things through the fixture's idempotent POST /things (Powertools' idempotency layer on the
 * simulated idempotency table), which writes the thing and its ThingHappened in one transaction; some
 * undo their thing later (ThingUndone, version 2). The probe consumers apply the generic entity effect;
 * the proof judges each consumer's count per thing. Nothing of an application: the mechanism's
 * simulation tests run on it with the example deleted.
 */

export interface ProbeSimulationOptions extends SimulationOptions {
  concurrentRetryChance: number;
  replayChance: number;
  /** A client sends its key again with another body (a client bug): it must get 422, never the first thing. */
  keyReuseChance: number;
  /**
   * Things belong to `accounts` accounts, and their events name the account as the producer says:
   * `ordering-key` as their orderingKey (each thing keeps its entity and versions); `entity` as their
   * entityId, the versions staying the thing's (a fork's mistake: the proof must fail on what the
   * generic effect then drops). Default: no accounts, each thing's events its own.
   */
  accounts?: { count: number; as: 'ordering-key' | 'entity' };
}

/** How the options name a thing's events (probe-simulation.ts's EventNaming), or undefined for the default. */
function namingOf(options: ProbeSimulationOptions): EventNaming | undefined {
  const accounts = options.accounts;
  if (accounts === undefined) return undefined;
  return (thingId) =>
    accounts.as === 'entity'
      ? { entityId: accountOf(thingId, accounts.count) }
      : { orderingKey: accountOf(thingId, accounts.count) };
}

/** The engine's defaults (every mechanism guard on), with the clients' retry, replay and key-reuse rates. */
export function probeSimulationOptions(
  overrides: Partial<ProbeSimulationOptions> & { seed: number },
): ProbeSimulationOptions {
  return {
    ...ENGINE_DEFAULTS,
    concurrentRetryChance: 0.1,
    replayChance: 0.1,
    keyReuseChance: 0.02,
    ...overrides,
  };
}

// ---- the clients ------------------------------------------------------------

interface Client extends ApiClient {
  request: ThingRequest;
  replayed: boolean;
  reusedKey: boolean;
  undone: boolean;
  clockSkewMs: number;
}

/** One client per thing: its key, its retries, maybe a replay, a key reused with another body, an undo. */
class ProbeClients implements DomainClients {
  private readonly thingIds = new Map<string, string>();

  constructor(private readonly world: EngineWorld<ProbeSimulationOptions>) {}

  start(index: number): void {
    const { scheduler, options } = this.world;
    const client: Client = {
      caller: `client-${index % 7}`,
      session: 1,
      key: `key-${index}`,
      request: { amount: scheduler.between(1, 1000) },
      chains: 0,
      created: false,
      replayed: false,
      reusedKey: false,
      undone: false,
      clockSkewMs: this.world.producerClockSkewMs(index),
    };
    this.world.activeClients += 1;
    this.create(client, 'new');
    if (scheduler.chance(options.concurrentRetryChance)) {
      scheduler.fault('client-concurrent-retry', client.key);
      this.create(client, 'retry-concurrent');
    }
  }

  /** Once no request of the client is in flight: maybe replay, maybe reuse the key with another body, maybe undo. */
  private afterRequests(client: Client): void {
    const { scheduler, options } = this.world;
    if (client.created && !client.replayed && scheduler.chance(options.replayChance)) {
      client.replayed = true;
      scheduler.at(scheduler.between(100, 600_000), () => this.create(client, 'retry-sequential'));
    } else if (client.created && !client.reusedKey && scheduler.chance(options.keyReuseChance)) {
      client.reusedKey = true;
      scheduler.fault('client-key-reuse', client.key);
      const other = { amount: client.request.amount + 1 };
      scheduler.at(scheduler.between(100, 600_000), () => this.create(client, 'retry-sequential', other));
    } else if (client.created && !client.undone && scheduler.chance(options.cancelChance ?? 0)) {
      scheduler.at(scheduler.between(0, 120_000), () => this.undo(client));
    } else {
      this.world.activeClients -= 1;
      if (!client.created) scheduler.trace(`client gave up on key=${client.key}`);
    }
  }

  /**
   * The `sharedEventIds` fault: clients 2k and 2k+1 (two tenants: `client-(i mod 7)`) give their things'
   * events the eventIds of client 2k's thing, each under its own tenant. Undefined without the fault.
   */
  private sharedEventIdBase(key: string): string | undefined {
    if ((this.world.options.faults.sharedEventIds ?? 0) <= 0) return undefined;
    const index = Number(key.slice('key-'.length));
    const first = index - (index % 2);
    return this.entityIdOf(`client-${first % 7}`, `key-${first}`);
  }

  private create(client: Client, op: PlannedRequest['op'], body: ThingRequest = client.request): void {
    const post: ApiPost = {
      kind: 'api-thing',
      path: '/things',
      body,
      timeoutSeconds: CREATE_THING_TIMEOUT_SECONDS,
      handler: (invocation) =>
        makeCreateThingHandler({
          documents: invocation.documents,
          idempotencyStore: simulatedIdempotencyStore(
            invocation,
            this.world.db,
            this.world.options.guards.apiIdempotency,
          ),
          now: this.world.producerClock(client.clockSkewMs),
          naming: namingOf(this.world.options),
          eventIdBase: this.sharedEventIdBase(client.key),
        }),
      statusOf: (error, who) => this.statusOf(error, who),
      done: () => this.afterRequests(client),
    };
    this.world.post(client, post, op, 1);
  }

  private undo(client: Client): void {
    const thingId = this.entityIdOf(client.caller, client.key);
    this.world.command(client, {
      kind: 'api-undo',
      op: 'cancel',
      method: 'POST',
      path: `/things/${thingId}/undo`,
      what: `undo of ${thingId}`,
      run: (invocation) =>
        invocation.run(() => undoThing(invocation.documents, thingId, this.world.producerClock(client.clockSkewMs)())),
      answer: (outcome) => (outcome === 'undone' ? 200 : 404),
      statusOf: (error, who) => this.statusOf(error, who),
      done: (status) => {
        if (status !== 200) {
          this.world.activeClients -= 1;
          return;
        }
        // Undone: the client may still replay its POST, which must answer as the first time.
        client.undone = true;
        client.replayed = false;
        this.afterRequests(client);
      },
    });
  }

  entityIdOf(caller: string, key: string): string {
    const known = `${caller}\n${key}`;
    let thingId = this.thingIds.get(known);
    if (thingId === undefined) {
      thingId = deriveThingId(this.world.callerOf(caller, 1), key);
      this.thingIds.set(known, thingId);
    }
    return thingId;
  }

  private statusOf(error: unknown, who: string): number | 'no-response' {
    if (error instanceof SimulatedCrash || error instanceof FunctionTimeout) return 'no-response';
    if (error instanceof TransactionCanceledException || error instanceof ServiceUnavailable) return 503;
    this.world.unexpectedErrors.push(`${who}: ${String(error)}`);
    return 500;
  }
}

// ---- the proof --------------------------------------------------------------

/**
 * The events a thing produced: ThingHappened, and ThingUndone once undone, as the API wrote them (under
 * the entity and ordering key its item records), each with its version for the kit's stale check.
 */
function producedEvents(things: readonly EntityItem[]): (ProducedEvent & { event: ProbeEvent })[] {
  return (things as unknown as ThingItem[]).flatMap((thing) => {
    const undoneAt = thing.status === 'UNDONE' ? String(thing.undoneAt) : undefined;
    const events = thingEvents({ ...thing, undoneAt });
    return events.map((event) => ({
      eventId: event.eventId,
      type: event.type,
      entityId: event.entityId,
      version: event.version,
      ...(event.tenant === undefined ? {} : { tenant: event.tenant }),
      event,
    }));
  });
}

/**
 * The probe domain as the proof kit judges it, for a list of consumers of the generic entity effect:
 * each consumer's count on each entity its events name (`appliedCount` of `EFFECT#<consumer>#<entityId>`:
 * the thing's, or whatever the producer named) is the number of the entity's events it takes, less
 * those it judged stale (its inbox entry superseded, never claimed). A count above it is an event
 * applied twice; below it, an event lost (`applied`). An event judged stale against itself came back
 * after its inbox claim was gone (`horizon`): only the dedupe horizon stops that, and its provider
 * call, if still owed, is then dropped unseen. Whether a stale mark was lawful (a newer event of the
 * entity was produced) is the kit's generic check, from the versions producedEvents gives.
 */
export function probeProof(consumers: readonly ConsumerSpec[]): ProofDomain {
  return {
    entityNoun: 'things',
    entityNounSingular: 'thing',
    entityTableOutput: 'ThingsTableName',
    // A run's keys start with its run id (buildPlan); the simulation judges every thing (runId '').
    isEntityOfRun: (item, runId) =>
      item.entity === 'THING' && (runId === '' || String(item.idempotencyKey).startsWith(`${runId}-`)),
    idOf: (thing) => String(thing.thingId),
    entityIdOf: deriveThingId,
    createdEventIdOf: (thingId) => thingHappened(thingId).eventId,
    buildPlan(random, options) {
      const plan: PlannedRequest[] = [];
      for (let n = 0; n < options.intents; n++) {
        const request = {
          caller: pick(random, options.callers),
          method: 'POST' as const,
          path: '/things',
          idempotencyKey: `${options.runId}-${n}`,
          body: { amount: intBetween(random, 1, 1000) },
        };
        plan.push({ ...request, index: plan.length, op: 'new' });
        if (random() < options.mix.retryConcurrent)
          plan.push({ ...request, index: plan.length, op: 'retry-concurrent' });
      }
      return plan;
    },
    producedEvents,
    checkEffects(things, effects) {
      const violations: Violation[] = [];
      const events = producedEvents(things);
      const entityIds = [...new Set(events.map((e) => e.entityId))];
      for (const consumer of consumers)
        for (const entityId of entityIds) {
          const taken = events.filter((e) => e.entityId === entityId && consumer.eventTypes.includes(e.type));
          if (consumer.ledger === 'sequenced') {
            violations.push(...sequencedCount(consumer.name, entityId, taken.length, effects));
            continue;
          }
          const stale = taken.filter((e) => {
            const entry = effects.get(inboxKey(consumer.name, e.eventId, e.tenant).pk);
            const supersededBy = entry?.[SUPERSEDED_BY_ATTRIBUTE];
            if (supersededBy === undefined || entry?.claimedAt !== undefined) return false;
            // Judged stale against itself: it came back once its claim was gone, and its effect was applied before.
            if (supersededBy !== e.eventId) return true;
            violations.push({
              invariant: 'horizon',
              detail: `${consumer.name}: ${e.eventId} came back after its inbox claim was gone, and was judged against its own earlier application`,
            });
            return false;
          });
          const expected = taken.length - stale.length;
          const applied = Number(effects.get(entityEffectKey(consumer.name, entityId).pk)?.appliedCount ?? 0);
          if (applied !== expected)
            violations.push({
              invariant: 'applied',
              detail: `${consumer.name}: ${entityId} applied ${applied} times, expected ${expected} (${applied > expected ? 'more' : 'fewer'} than expected)`,
            });
        }
      return { violations, summary: `${things.length} things, ${consumers.length} consumers` };
    },
  };
}

/**
 * A consumer on the sequenced ledger leaves no mark on an event it judged stale, so its count is held to its
 * item's claims instead: the effect and the claim are one update, so the count is the number of claims,
 * and neither exceeds the entity's events (whether each claim was lawful is the kit's generic check).
 */
function sequencedCount(
  consumer: string,
  entityId: string,
  taken: number,
  effects: ReadonlyMap<string, Record<string, unknown>>,
): Violation[] {
  const item = effects.get(sequencedEntityKey(consumer, { entityId }).pk);
  const applied = Number(item?.appliedCount ?? 0);
  const claims = Number(item?.[SEQUENCE_ATTRIBUTES.claims] ?? 0);
  if (applied === claims && applied <= taken) return [];
  return [
    {
      invariant: 'applied',
      detail: `${consumer}: ${entityId} applied ${applied} times under ${claims} claims, for ${taken} event(s) (${applied > taken ? 'more' : 'other'} than expected)`,
    },
  ];
}

/** The probe domain as the engine's plug-in. */
export const PROBE_DOMAIN: SimulationDomain<ProbeSimulationOptions> = {
  consumers: PROBE_SIMULATED_CONSUMERS,
  eventTypes: PROBE_EVENT_TYPES,
  outboxTable: THINGS_TABLE,
  entityPartitionPrefix: THING_PK_PREFIX,
  clients: (world) => new ProbeClients(world),
  // One more: a valid probe event with other content.
  forge: (event) => {
    const probe = event as ProbeEvent;
    return { ...probe, payload: { amount: probe.payload.amount + 1 } };
  },
  entities: (db) => db.storedItems(THINGS_TABLE).filter((item) => item.entity === 'THING'),
  proof: probeProof,
};

/** The simulated probe world, for tests that look inside it. */
export class ProbeWorld extends EngineWorld<ProbeSimulationOptions> {
  constructor(options: ProbeSimulationOptions, consumerSpecs: readonly ConsumerSpec[] = PROBE_SIMULATED_CONSUMERS) {
    super(options, PROBE_DOMAIN, consumerSpecs);
  }
}

/** Runs one schedule of the probe world. */
export function simulateProbe(
  options: ProbeSimulationOptions,
  consumerSpecs: readonly ConsumerSpec[] = PROBE_SIMULATED_CONSUMERS,
): Promise<SimulationResult> {
  return simulateWorld(options, PROBE_DOMAIN, consumerSpecs);
}

/** The probe world as `npm run sim` and the campaign take one (packages/tools/src/simulation/contract.ts). */
export const PROBE_SIMULATION = simulatedWorld(PROBE_DOMAIN, {
  options: probeSimulationOptions,
  // Thing ids, message ids and keys: what a violation names and the trace mentions.
  idsIn: (text) => text.match(/thing_[0-9a-f]+|[\w.-]+-m\d+|key-\d+/g) ?? [],
});
