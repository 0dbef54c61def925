// First: Powertools reads its settings when it loads.
import './quiet-powertools';
import type { Context } from 'aws-lambda';
import { lambdaContext } from '@exactly-once/runtime/testing';
import { attemptsForBudget } from '@exactly-once/runtime/consumer/retry-budget';
import { dedupeWindow } from '@exactly-once/runtime/consumer/dedupe-horizon';
import type { EventEnvelope } from '@exactly-once/runtime/envelope';
import type { ConsumerConfig } from '@exactly-once/runtime/wiring/consumer-wiring';
import { ledgerOf, validateConsumerSpecs, type ConsumerSpec } from '@exactly-once/runtime/consumer-spec';
import type { ConsumerRoute } from '@exactly-once/runtime/outbox/routes';
import type { Observation } from '../../proof-kit/drive';
import type { PlannedRequest } from '../../proof-kit/plan';
import type { SimulationResult, SimulationWorld } from '../contract';
import { MemoryDynamoDb } from '../memory-dynamodb';
import { apiCallerOf, postIntent, sendCommand } from './api-clients';
import { audit } from './audit';
import { EngineState } from './engine-state';
import { ConsumerHarness } from './consumer-harness';
import { consumerRoutes, handlerFactory, queueNamesOf } from './consumers';
import { WorldFaults } from './faults';
import { signerOf } from './guards/caller-scope';
import { maxReceiveCount } from './guards/retry-budget';
import { withGuard, type GuardNames } from './guards/names';
import { transactionsWithoutGuards } from './guards/transactions';
import { Invocation, type InvocationFaults } from './invocation';
import { Operator } from './operator';
import { DEFAULT_REDRIVE_AFTER_SECONDS, type SimulationOptions } from './options';
import type { ApiClient, ApiCommand, ApiPost, SimConsumer, SimulationDomain } from './port';
import { SimProviders } from './provider';
import { RelayHarness } from './relay-harness';
import { Releases } from './releases';
import { EPOCH_MS, Scheduler } from './scheduler';
import type { SimQueue } from './sqs';
import { createSimulatedTables, EFFECTS_TABLE } from './tables';

// The engine's surface, where plug-ins and tests have always imported it from.
export type { SimulationResult, SimulationVerification } from '../contract';
export * from './options';
export * from './port';
export { withGuard, type GuardNames } from './guards/names';

/** Stands for the table the deployed consumers log provider calls to; the simulated providers replace it. */
const PROVIDER_LOG_TABLE = 'ProviderLog';
const SOURCE_RETENTION_SECONDS = 4 * 86400;
const DLQ_RETENTION_SECONDS = 14 * 86400;

/**
 * The simulation engine: one simulated deployment driven by one seed. The domain's clients (a
 * plug-in: SimulationDomain, port.ts) send their intents to its API; the engine runs the rest: the table
 * holding the outbox and its stream, the relay and the sweeper (relay-harness.ts), and for each consumer
 * of the list its queue and DLQ, its event source mapping and its function (consumer-harness.ts); the
 * external providers each consumer names; the faults (faults.ts); the operator (operator.ts); the
 * audit (audit.ts). The functions are the deployed ones: each invocation runs the handler modules' own
 * factories on that invocation's simulated clients, the virtual clock and the simulated providers, as
 * the deployed handlers run them on their AWS clients. The consumers' records' deadline runs on the
 * virtual clock too (Invocation.timer), and its signal aborts their simulated DynamoDB and provider calls.
 *
 * Long runs (`longRedrive`): weeks of virtual time with few intents, the
 * operator redriving the DLQs every few days, DynamoDB's TTL deleting expired
 * inbox claims (late, never early) and each queue's retention: what the dedupe
 * horizon is for.
 */
export class World<O extends SimulationOptions = SimulationOptions> {
  readonly scheduler: Scheduler;
  readonly db = new MemoryDynamoDb();
  /** By spec name, in the list's order. */
  readonly consumers = new Map<string, SimConsumer>();
  /** The relay's routes (ENV.consumerRoutes) to the simulated queues. */
  readonly routes: ConsumerRoute[];
  /** The intents' requests, as the proof kit's plan (the domain's clients push them). */
  readonly plan: PlannedRequest[] = [];
  /** What each request got back (the domain's clients push them). */
  readonly observations: Observation[] = [];
  /** Errors no fault explains (a 500 from the API): each one fails the schedule. */
  readonly unexpectedErrors: string[] = [];
  /** Clients still busy (the domain's clients count themselves in and out): the world drains after them. */
  activeClients = 0;
  readonly now = (): Date => this.scheduler.date();

  /** The engine's own state, shared by its parts (engine-state.ts), and the parts. */
  private readonly engine: EngineState<O>;
  private readonly faults: WorldFaults;
  private readonly operator: Operator;
  private readonly relay: RelayHarness;
  private readonly consumerHarness: ConsumerHarness;
  private invocations = 0;
  private readonly transactionWithoutGuards: InvocationFaults['withoutGuards'];

  /** `consumerSpecs`: who consumes what (default: the domain's list); checked as the stack checks it. */
  constructor(
    readonly options: O,
    domain: SimulationDomain<O>,
    consumerSpecs: readonly ConsumerSpec[] = domain.consumers,
  ) {
    validateConsumerSpecs(consumerSpecs, domain.eventTypes);
    this.scheduler = new Scheduler(options.seed, options.keepTrace);
    const providers = new SimProviders(this.scheduler, {
      memorySeconds: options.settings.providerMemorySeconds,
      failureChance: options.faults.providerFailure,
      answerMs: options.faults.providerAnswerMs,
    });
    const engine = new EngineState(this.scheduler, this.db, domain, providers);
    this.engine = engine;
    this.faults = new WorldFaults(this, engine);
    this.operator = new Operator(this, engine);
    this.consumerHarness = new ConsumerHarness(this, engine);
    createSimulatedTables(this.db, domain.outboxTable);
    // As packages/cdk/src/consumer-pipelines.ts derives them, with its 3-day redrive allowance.
    const dedupe = dedupeWindow({
      sourceRetentionSeconds: SOURCE_RETENTION_SECONDS,
      deadLetterRetentionSeconds: DLQ_RETENTION_SECONDS,
      redriveAllowanceSeconds: 3 * 86400,
    });
    this.transactionWithoutGuards = transactionsWithoutGuards(options.guards, this.now, dedupe.claimTtlSeconds);
    for (const spec of consumerSpecs) this.consumers.set(spec.name, this.deployConsumer(spec, dedupe));
    this.routes = consumerRoutes(consumerSpecs);
    engine.releases = new Releases(
      options.faults,
      options.guards,
      consumerSpecs.map((spec) => spec.name),
      (min, max) => this.scheduler.between(min, max),
    );
    this.relay = new RelayHarness(this, engine, {
      table: domain.outboxTable,
      entityPartitionPrefix: domain.entityPartitionPrefix,
      retentionSeconds: DLQ_RETENTION_SECONDS,
    });
    this.db.onChange = (change) => {
      if (change.table !== domain.outboxTable) return;
      const wasPending = change.oldImage?.pendingShard !== undefined;
      const isPending = change.newImage?.pendingShard !== undefined;
      engine.pendingOutbox += Number(isPending) - Number(wasPending);
      if (change.oldImage === undefined && change.newImage?.entity === 'OUTBOX') {
        const event = change.newImage.event as EventEnvelope;
        this.faults.beforeRelay(event);
        this.relay.insert(change.newImage, event);
      }
    };
    const ignored = domain.conditionsIgnored?.(options);
    if (ignored !== undefined) this.db.ignoreConditionOn = ignored;
    engine.clients = domain.clients(this);
  }

  /** One consumer of the list: its queue and DLQ as the stack configures them, its environment, its function. */
  private deployConsumer(spec: ConsumerSpec, dedupe: { claimTtlSeconds: number; horizonSeconds: number }): SimConsumer {
    const s = this.options.settings;
    // As packages/cdk/src/consumer-pipelines.ts derives them; the guard-off budget is the old flat 5 receives.
    const attempts = attemptsForBudget(s.retryBudget);
    const names = queueNamesOf(spec);
    const deadLetterQueue = this.engine.queue({
      name: names.deadLetterQueue,
      fifo: spec.fifo,
      visibilityTimeoutSeconds: 30,
      retentionSeconds: DLQ_RETENTION_SECONDS,
    });
    const queue = this.engine.queue({
      name: names.queue,
      fifo: spec.fifo,
      visibilityTimeoutSeconds: 6 * s.consumerTimeoutSeconds + spec.batchingWindowSeconds,
      maxReceiveCount: maxReceiveCount(this.options.guards.retryBudget, attempts, spec),
      retentionSeconds: SOURCE_RETENTION_SECONDS,
      deadLetterQueue,
      // As packages/cdk/src/queue-defaults.ts configures a FIFO source queue; a standard queue delivers duplicates.
      ...(spec.fifo
        ? { deduplicationScope: 'messageGroup' as const }
        : { duplicateChance: this.options.faults.sqsDuplicate }),
    });
    // What the stack puts in the function's environment (packages/cdk/src), naming the simulated tables and queues.
    const config: ConsumerConfig = {
      consumer: spec.name,
      fifo: spec.fifo,
      effectsTable: EFFECTS_TABLE,
      providerTable: PROVIDER_LOG_TABLE,
      inboxTtlSeconds: dedupe.claimTtlSeconds,
      // As the stack gives a sequenced consumer no horizon: its claims never expire (ConsumerSpec.ledger).
      dedupeHorizonSeconds: ledgerOf(spec) === 'sequenced' ? Number.POSITIVE_INFINITY : dedupe.horizonSeconds,
      queueUrl: queue.url,
      deadLetterQueueUrl: deadLetterQueue.url,
      backoff: { baseSeconds: s.retryBudget.baseSeconds, capSeconds: s.retryBudget.capSeconds },
      maxAttempts: attempts,
    };
    return { spec, queue, deadLetterQueue, config, makeHandler: handlerFactory(spec) };
  }

  /** The relay mapping's on-failure queue. */
  get relayFailures(): SimQueue {
    return this.relay.failures;
  }

  /** One invocation; `timeoutSeconds` for the functions Lambda stops at their timeout (not the API's requests). */
  invocation(kind: string, timeoutSeconds?: number): Invocation {
    this.invocations += 1;
    const f = this.options.faults;
    return new Invocation(
      `${kind}#${this.invocations}`,
      this.scheduler,
      this.db,
      this.engine.queues,
      {
        crashPerCall: f.crashPerCall,
        transactionConflict: f.transactionConflict,
        sqsSendFailure: f.sqsSendFailure,
        timeoutPerCall: f.timeoutPerCall,
        sdkRetryOfCommit: f.sdkRetryOfCommit,
        withoutGuards: this.transactionWithoutGuards,
      },
      timeoutSeconds,
    );
  }

  /** The Lambda context of one invocation: its deadline on the virtual clock, its name as the request id. */
  contextOf(invocation: Invocation, timeoutSeconds: number): Context {
    return lambdaContext(timeoutSeconds * 1000, { clock: () => this.scheduler.now, requestId: invocation.name });
  }

  async run(): Promise<SimulationResult> {
    const { scheduler, options } = this;
    const savedRandom = Math.random;
    const savedNow = Date.now;
    const savedIdempotencyDisabled = process.env.POWERTOOLS_IDEMPOTENCY_DISABLED;
    // The real code draws backoff jitter from Math.random: the seed must decide it too.
    Math.random = scheduler.random;
    // Powertools' idempotency layer reads the time from Date.now (record expiry, in-progress expiry, its put's condition).
    Date.now = () => EPOCH_MS + scheduler.now;
    // Powertools' own off switch, read when a handler's idempotency config is built: the 'bypassed' break.
    if (options.guards.apiIdempotency === 'bypassed') process.env.POWERTOOLS_IDEMPOTENCY_DISABLED = 'true';
    try {
      const arrivalsMs = (options.intents / options.arrivalsPerSecond) * 1000;
      for (let i = 0; i < options.intents; i++)
        scheduler.at(scheduler.between(0, arrivalsMs), () => this.engine.clients.start(i));
      this.faults.scheduleOutages(arrivalsMs);
      this.faults.schedulePoison(arrivalsMs);
      this.consumerHarness.start();
      this.relay.stream.start();
      scheduler.at(60_000, () => this.relay.sweep());
      const redrives = this.operator.scheduleRedrives(arrivalsMs);
      this.faults.scheduleDlqForgeries(redrives);
      this.operator.scheduleTtl();
      const deadline = (redrives[redrives.length - 1] ?? arrivalsMs) + 6 * 3600 * 1000;
      scheduler.at(arrivalsMs, () => this.checkDrained(deadline));
      await scheduler.run();
      return audit(this, this.engine, this.operator);
    } finally {
      Math.random = savedRandom;
      Date.now = savedNow;
      restoreEnv('POWERTOOLS_IDEMPOTENCY_DISABLED', savedIdempotencyDisabled);
    }
  }

  // ---- the plug-in's calls: its clients' identities, POSTs and clocks ----------

  /** The identity a client's session signs with (guard `callerScope`, guards/caller-scope.ts). */
  signerOf(client: string, session: number): string {
    return signerOf(this.options.guards.callerScope, client, session);
  }

  /** Who the API says is calling: the real `callerOf` on the request context that identity produces. */
  callerOf(client: string, session: number): string {
    return apiCallerOf(this.signerOf(client, session));
  }

  /**
   * One POST of a client's intent through the domain's deployed handler, with the client's retries
   * (api-clients.ts `postIntent`). `request.done()` runs once the client is through with this chain of tries.
   */
  post(client: ApiClient, request: ApiPost, op: PlannedRequest['op'], attempt: number, continuesChain = false): void {
    postIntent(this, client, request, op, attempt, continuesChain);
  }

  /**
   * Any other command of a client (a cancel, a refund) through the domain's own code, with the client's
   * retries of no answer or a 5xx (api-clients.ts `sendCommand`). `command.done(status)` runs once.
   */
  command<R>(client: ApiClient, command: ApiCommand<R>): void {
    sendCommand(this, client, command, 1);
  }

  /** How far off the clock of the API instance producing this client's events is (the `producerClockSkew` fault). */
  producerClockSkewMs(index: number): number {
    return this.faults.producerClockSkewMs(index);
  }

  /** A producer's clock: the world's, off by `skewMs` (from producerClockSkewMs). */
  producerClock(skewMs: number): () => Date {
    return skewMs === 0 ? this.now : () => new Date(this.now().getTime() + skewMs);
  }

  // ---- the end ------------------------------------------------------------

  private checkDrained(deadline: number): void {
    const { stream } = this.relay;
    const { engine } = this;
    const queues = [...this.consumers.values()].map((c) => c.queue);
    const quiet =
      this.activeClients === 0 &&
      engine.pendingOutbox === 0 &&
      queues.every((queue) => queue.messages.size === 0) &&
      stream.backlog().every((left) => left === 0);
    const idle = quiet && this.operator.redrivesLeft === 0;
    if (idle || this.scheduler.now >= deadline) {
      engine.stopped = true;
      stream.stop();
      this.scheduler.trace(
        idle
          ? 'drained'
          : `deadline reached before the system drained: ${this.activeClients} clients busy, ${engine.pendingOutbox} outbox items pending, ` +
              `${queues.map((queue) => queue.messages.size).join(' + ')} messages queued, ` +
              `${stream.backlog().join('+')} stream records left`,
      );
      return;
    }
    // Quiet until the operator's redrive: look again just after it rather than every 5 s for an hour.
    const next = quiet ? Math.max(5_000, this.operator.redriveAt - this.scheduler.now + 1_000) : 5_000;
    this.scheduler.at(next, () => this.checkDrained(deadline));
  }
}

function restoreEnv(name: string, saved: string | undefined): void {
  if (saved === undefined) delete process.env[name];
  else process.env[name] = saved;
}

/** Runs one schedule of `domain`'s world. */
export function simulate<O extends SimulationOptions>(
  options: O,
  domain: SimulationDomain<O>,
  consumerSpecs: readonly ConsumerSpec[] = domain.consumers,
): Promise<SimulationResult> {
  return new World(options, domain, consumerSpecs).run();
}

/**
 * The world `npm run sim` runs (packages/tools/src/simulation/contract.ts) for a domain: its defaults over the
 * engine's, the mechanism's guards and the domain's, the ids its violations name.
 */
export function simulatedWorld<O extends SimulationOptions>(
  domain: SimulationDomain<O>,
  world: {
    options(overrides: Partial<O> & { seed: number }): O;
    guardNames?: GuardNames;
    /** The ids in a violation's text that pick its trace lines (entity ids, message ids, keys). */
    idsIn(text: string): string[];
  },
): SimulationWorld {
  return {
    simulate: (options) => simulate(options as O, domain),
    options: (overrides) => world.options(overrides as Partial<O> & { seed: number }),
    defaultRedriveAfterSeconds: DEFAULT_REDRIVE_AFTER_SECONDS,
    withGuard: (guards, name, raw) => withGuard(guards, name, raw, world.guardNames),
    idsIn: world.idsIn,
  };
}
