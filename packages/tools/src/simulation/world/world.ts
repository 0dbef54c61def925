import './environment';
import { AsyncLocalStorage } from 'node:async_hooks';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  GetCommand,
  TransactWriteCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { apiEvent, lambdaContext } from '@exactly-once/runtime/testing';
import type { AttributeValue, Context, DynamoDBStreamEvent, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import {
  expiresAfter,
  FINGERPRINT_ATTRIBUTE,
  inboxKey,
  INBOX_TTL_ATTRIBUTE,
  PROVIDER_CALL_DONE_ATTRIBUTE,
  PROVIDER_CALL_LEASE_ATTRIBUTE,
  PROVIDER_CALL_LEASE_HOLDER_ATTRIBUTE,
  SUPERSEDED_BY_ATTRIBUTE,
} from '@exactly-once/runtime/aws/inbox-table';
import { DEFAULT_DISPATCHED_RETENTION_SECONDS } from '@exactly-once/runtime/aws/outbox-table';
import {
  attemptsForBudget,
  fifoMaxReceiveCount,
  fullJitterBackoffSeconds,
  RETRY_BUDGET,
  type RetryBudget,
} from '@exactly-once/runtime/consumer/retry-budget';
import { dedupeWindow } from '@exactly-once/runtime/consumer/dedupe-horizon';
import type { EventEnvelope } from '@exactly-once/runtime/envelope';
import { withoutInbox } from '@exactly-once/runtime/faults/inbox-bypass';
import { NO_FAULTS } from '@exactly-once/runtime/faults/plan';
import { relayFaults } from '@exactly-once/runtime/faults/relay-faults';
import type { ConsumerSettings } from '@exactly-once/runtime/consumer/consume-record';
import { consumerWiring, type ConsumerConfig, type ConsumerWiring } from '@exactly-once/runtime/wiring/consumer-wiring';
import { makeRelayHandler, type RelayFaults } from '@exactly-once/runtime/wiring/relay-handler';
import { makeSweeperHandler } from '@exactly-once/runtime/wiring/sweeper-handler';
import { outboxWiring, type OutboxConfig, type OutboxWiring } from '@exactly-once/runtime/wiring/outbox-wiring';
import type { EventPublisher } from '@exactly-once/runtime/outbox/ports';
import type { EventRef } from '@exactly-once/runtime/inbox/ports';
import { DeadlineExceeded, type RecordWork } from '@exactly-once/runtime/consumer/record-work';
import { leaseHolderOf } from '@exactly-once/runtime/consumer/queue-consumer';
import { parsedAsDeployed } from './parser-change';
import { keyAsSent, Releases, type Release } from './releases';
import { dlqAcceptsForger, dlqForgeries, FORGED_EVENT_ID_SUFFIX } from './dlq-forgery';
import { providerKey, validateConsumerSpecs, type ConsumerSpec } from '@exactly-once/runtime/consumer-spec';
import type { ConsumerRoute } from '@exactly-once/runtime/outbox/routes';
import { ENV } from '@exactly-once/runtime/env-names';
import type { Observation } from '../../proof-kit/drive';
import type { PlannedRequest } from '../../proof-kit/plan';
import type { ProofDomain } from '../../proof-kit/domain';
import { checkInvariants } from '../../proof-kit/verify';
import { eventIdOf } from '../../dlq/messages';
import type { SimulationOptionsBase, SimulationResult, SimulationVerification, SimulationWorld } from '../contract';

export type { SimulationResult, SimulationVerification } from '../contract';

import { MemoryDynamoDb, type Item } from '../memory-dynamodb';
import { consumerRoutes, handlerFactory, queueNamesOf, type HandlerFactory } from './consumers';
import { Invocation, type InvocationFaults } from './invocation';
import type { ApiIdempotency } from './api';
import { callerOf } from '@exactly-once/runtime/api/http';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { SimProviders } from './provider';
import { EPOCH_MS, Scheduler } from './scheduler';
import { SimQueue, type SimMessage } from './sqs';
import { StreamMapping, type BatchOutcome, type StreamRecordBase } from './stream';
import { createSimulatedTables, EFFECTS_TABLE } from './tables';

/**
 * The simulation engine: one simulated deployment driven by one seed. The domain's clients (a
 * plug-in: SimulationDomain) send their intents to its API; the engine runs the rest: the table
 * holding the outbox and its stream, the relay and the sweeper, and for each consumer of the list its
 * queue and DLQ, its event source mapping and its function; the external providers each consumer
 * names; the faults; the mechanism's invariants. The functions are the deployed ones: each
 * invocation runs the handler modules' own factories on that invocation's
 * simulated clients, the virtual clock and the simulated providers, as the
 * deployed handlers run them on their AWS clients. The consumers' records'
 * deadline runs on the virtual clock too (Invocation.timer), and its signal
 * aborts their simulated DynamoDB and provider calls.
 *
 * Long runs (`longRedrive`): weeks of virtual time with few orders, the
 * operator redriving the DLQs every few days, DynamoDB's TTL deleting expired
 * inbox claims (late, never early) and each queue's retention: what the dedupe
 * horizon is for.
 */
export type FaultRates = {
  /** Per outside call of any invocation: the process dies at that await point. */
  crashPerCall: number;
  /**
   * Per outside call of the relay, the sweeper, a consumer or POST /orders: the call hangs
   * past the function's timeout and Lambda stops the function (its result is
   * lost; the call may still land). A consumer's record deadline cuts the hung
   * call first (it may still land too), unless the hung call is on the
   * failure path after the deadline, which takes no signal.
   */
  timeoutPerCall: number;
  transactionConflict: number;
  sqsSendFailure: number;
  /** Standard queue: a received message is delivered again while in flight. */
  sqsDuplicate: number;
  /** Stream: a successfully processed batch is delivered again. */
  streamRedelivery: number;
  /** Stream: an outbox insert never reaches the relay (the sweeper must find it). */
  streamRecordLost: number;
  /** Relay: an event is also published as a new message (new message id, new FIFO dedup id). */
  producerResend: number;
  /** API: the client never hears the answer (timeout) and retries with the same key. */
  responseLost: number;
  /** Provider: a call fails (5xx). */
  providerFailure: number;
  /**
   * Provider outage windows per schedule (a fraction is a chance: 0.5 is one
   * window in half of the schedules), each on one provider, and their length in seconds.
   */
  providerOutages: number;
  providerOutageSeconds: [number, number];
  /**
   * Per outage window: chance it lasts `longOutageSeconds` instead, longer than
   * the consumers' retry budget, so live messages reach the DLQs (with
   * RetryBudgetExhausted) and come back with the operator's redrive, typically
   * after their order was cancelled.
   */
  longOutageChance: number;
  longOutageSeconds: [number, number];
  /** The providers an outage window may hit (one per window, drawn from these; default: every provider a consumer names). */
  outageProviders?: string[];
  /** API: a retry comes from a new session of the client's role (its credentials rotated). */
  credentialRotation: number;
  /** Malformed messages sent straight to every consumer's queue per run (they belong in the DLQs, with their cause). */
  poisonMessages: number;
  /**
   * Adversarial (0 by default). Per outbox event: a forger who learned its eventId sends, before the
   * relay publishes it, a copy with other content (its order's total changed) to every consumer
   * queue that takes it, under a deduplication id of its own. The queues' sender policy denies the
   * send unless the `queueSenders` guard is off.
   */
  forgedFirst?: number;
  /**
   * Adversarial (0 by default). Per client: the API instance that produces its order's events has
   * its clock this many seconds off, drawn from `producerClockSkewSeconds` (the events' occurredAt
   * and the order's timestamps carry it). Within the consumers' margin (300 s) it must change
   * nothing; beyond it, the events are refused (OccurredInFuture), never applied.
   */
  producerClockSkew?: number;
  producerClockSkewSeconds?: [number, number];
  /** Per ledger transaction (0 by default): it commits, its answer is lost, and the SDK sends it again. */
  sdkRetryOfCommit?: number;
  /**
   * A deploy mid-run (off by default): from this virtual second on, every consumer's parse gives each
   * event's payload a default field (parser-change.ts), as a consumer whose schema gained a `.default()`
   * would. The bodies on the queues are unchanged: an event claimed before and redelivered after is the
   * same event, and must stay a duplicate whose owed provider call is made.
   */
  parserChangeAtSeconds?: number;
  /**
   * A deploy mid-run (off by default): before this window every consumer runs the previous release
   * (key shape 1: no tenant in its inbox key or provider key); each consumer's function is replaced by
   * this release at a time drawn in the window (releases.ts). Redeliveries across the switch must stay duplicates.
   */
  deployWindowSeconds?: [number, number];
  /**
   * A rollback mid-run (off by default): from this virtual second on, every consumer runs the release
   * before this one (key shape 2: the tenant in the inbox key, not in the provider key; releases.ts).
   */
  rollbackAtSeconds?: number;
  /**
   * Adversarial (0 by default). A minute before the operator's first redrive, per consumer, this many
   * published events it takes are forged into its DLQ (dlq-forgery.ts): one under the known eventId with
   * other content, one under a new eventId. The DLQs' sender policy refuses the forger unless the
   * `dlqSenderPolicy` guard is off; past it, the redrive moves both into the guarded source queue.
   */
  dlqForgeries?: number;
  /**
   * Off by default; on when above 0. The domain's clients give the events of two tenants the same
   * eventIds (the probe's: clients 2k and 2k+1, each event under its own tenant). Their claims differ
   * (the tenant is in the inbox key); their provider calls must too (the `tenantInProviderKey` guard).
   */
  sharedEventIds?: number;
  /** How long an accepted provider call is in flight before it is answered (ms; default 10 to 300). */
  providerAnswerMs?: [number, number];
};

/**
 * The record a consumer's use case is applying (its event, its work and the SQS message it came in): set
 * around each record by the simulation's consumer wiring, read by the guard switches below the ledgers.
 */
const applying = new AsyncLocalStorage<{ event: EventRef; work: RecordWork; messageId: string }>();

/**
 * The mechanism's guards: each can be switched off (test-only) to prove that the simulation notices.
 * A domain adds its own (`SimulationDomain.guards`).
 */
export type MechanismGuards = {
  /**
   * Whom keys and entities are scoped to: the principal (the API's own `callerOf`
   * on an assumed-role session), or each session (a bug; here each session
   * signs as an identity of its own, so the deployed handler scopes to it).
   */
  callerScope: 'principal' | 'session';
  /** The idempotent API's Powertools idempotency layer, or a break of it (see ApiIdempotency). */
  apiIdempotency: ApiIdempotency;
  inboxClaim: boolean;
  /** What the inbox claim is keyed on: the producer's eventId (correct) or the SQS messageId. */
  dedupeOn: 'eventId' | 'messageId';
  /**
   * Whether a duplicate asks the inbox if its provider call is still owed (the
   * ledgers' `providerCallPending`). Off (a bug): every duplicate calls the
   * provider again, even after the call was recorded done or a cancel superseded it.
   */
  providerCompletion: boolean;
  /**
   * The consumers' retry budget: `budget` is the deployed one (RETRY_BUDGET:
   * equal jitter, 14 tries, the FIFO consumer's own try count); `seconds` is
   * the one before it (5 receives on both queues, full jitter from 2 s, no try
   * count), which a dependency outage of a minute outlasts.
   */
  retryBudget: 'budget' | 'seconds';
  /**
   * The records' deadline (queue-consumer.ts): aborted before the function's
   * timeout, a hung record fails like a transient error and its batch-mates are
   * acked. Off (the code before it): the deadline's timer never fires, so a hung
   * call holds its batch until Lambda stops the function, and nothing is acked.
   */
  recordDeadline: boolean;
  /**
   * The dedupe horizon (consume-record.ts `refusePastHorizon`): an event older
   * than the horizon is dead-lettered with DedupeHorizonPassed. Off: the
   * horizon is infinite, so a redrive after the claim's TTL applies it again.
   */
  dedupeHorizon: boolean;
  /**
   * The provider-call lease (dynamodb-ledgers.ts `leaseProviderCall`): a
   * duplicate that owes the provider call takes the lease first. Off: every
   * lease is granted, so concurrent copies call the provider at the same time.
   */
  providerCallLease: boolean;
  /**
   * The event's fingerprint in its inbox claim (inbox-ledger.ts `refuseAnotherEvent`): a failed claim
   * means "already done" only for the same content. Off (the code before it): claims carry no
   * fingerprint, so another event under a used id is acknowledged as a duplicate and lost.
   */
  fingerprint: boolean;
  /** The consumer queues' sender policy (packages/cdk/src/queue-senders.ts): only the relay and the sweeper may send. */
  queueSenders: boolean;
  /**
   * Future stamps (consume-record.ts OccurredInFuture, inbox-table.ts `claimExpiresAt`): an event
   * stamped beyond the clock-skew margin is refused, and a claim expires counted from the later of
   * its claim and its occurredAt. Off: both gone, so a future stamp passes the dedupe horizon after
   * its claim expired.
   */
  futureStamps: boolean;
  /** The ledger transactions' ClientRequestToken: off, an SDK retry of a commit fails on its own claim. */
  requestToken: boolean;
  /**
   * A failed claim whose lease holder is this try's own is this try's commit, reported applied
   * (inbox-ledger.ts `transact`). Off: the entry the claim failed on comes back without its holder, so
   * a commit whose answer was lost and that is retried under another token is reported a duplicate.
   */
  ownCommit: boolean;
  /**
   * The claim's fingerprint is of the record's message body (consume-record.ts, `RecordWork.sentFingerprint`).
   * Off: the ledger fingerprints the consumer's parse, so after a parser change an event claimed before it
   * reads as another event under its id (EventIdReused) and its owed provider call is never made.
   */
  sentFingerprint: boolean;
  /**
   * The done-mark's own bound (record-work.ts `recordingSignal`): a provider's 2xx is recorded even
   * when the record's deadline fires meanwhile. Off: the done-mark runs under the deadline, is cut
   * there, and the next copy calls the provider again.
   */
  doneMarkBound: boolean;
  /**
   * This release's ledgers find a claim under every key shape (`LedgerOptions.keys.find`, default 3, 2, 1).
   * Off: they look only under their own shape, so an event an older release claimed is applied again.
   */
  legacyKeyLookup: boolean;
  /**
   * Under the `rollbackAtSeconds` fault: this release runs as the first step of the two-step upgrade
   * (`keys: { write: 2 }`, docs/deploying.md). Off: it writes its own shape, and the rolled-back release
   * sends an owed call under another key than the one the claim recorded.
   */
  rollbackSafeUpgrade: boolean;
  /** The consumers' DLQs refuse senders but the consumer's role, the operators and SQS itself (dlq-forgery.ts). */
  dlqSenderPolicy: boolean;
  /**
   * The provider key carries the event's tenant (inbox/keys.ts `providerKey`). Off: the consumers send
   * `<consumer>:<eventId>`, so two tenants' events under one id meet at the provider under one key.
   */
  tenantInProviderKey: boolean;
};

export interface Settings {
  /** The consumers' retry budget; the queues' maxReceiveCount and the FIFO try limit derive from it as in packages/cdk/src/consumer-pipelines.ts. */
  retryBudget: RetryBudget;
  consumerTimeoutSeconds: number;
  relayTimeoutSeconds: number;
  sweeperTimeoutSeconds: number;
  /** The relay's stream event source mapping. */
  relayBatchSize: number;
  relayRetryAttempts: number;
  relayMaxRecordAgeSeconds: number;
  relayBisectOnFunctionError: boolean;
  sweepAgeSeconds: number;
  providerMemorySeconds: number;
}

export interface SimulationOptions extends SimulationOptionsBase {
  seed: number;
  /** How many intents the domain's clients start (the shop: orders). */
  orders: number;
  arrivalsPerSecond: number;
  faults: FaultRates;
  guards: MechanismGuards;
  settings: Settings;
  /** Operator action: redrive every consumer's DLQ to its queue this long after the last order arrived (undefined: never). */
  redriveDlqsAfterSeconds?: number;
  /**
   * Weeks of virtual time instead: the operator redrives every consumer's DLQ
   * `redrives` times, every `everyDays` days after the last order arrived (in
   * place of `redriveDlqsAfterSeconds`), so an event that keeps failing (a
   * provider down for weeks) circulates past its inbox claim's TTL. Only such
   * runs model DynamoDB's TTL deletion (an hourly sweep deletes each expired
   * item up to `ttlDeletionDelaySeconds` late, never early; default 2 days).
   */
  longRedrive?: { redrives: number; everyDays: number; ttlDeletionDelaySeconds?: number };
  /** Trace lines kept for the report (all lines are hashed). */
  keepTrace?: number;
}

/**
 * The deployed stack's numbers (packages/cdk/src: consumer-pipelines.ts, outbox-relay.ts),
 * checked against the synthesized template by stack-settings.test.ts; and a
 * fault mix that a correct system survives.
 */
export const DEFAULT_SETTINGS: Settings = {
  retryBudget: RETRY_BUDGET,
  consumerTimeoutSeconds: 30,
  relayTimeoutSeconds: 30,
  sweeperTimeoutSeconds: 60,
  relayBatchSize: 100,
  relayRetryAttempts: 8,
  relayMaxRecordAgeSeconds: 6 * 3600,
  relayBisectOnFunctionError: true,
  sweepAgeSeconds: 300,
  providerMemorySeconds: 24 * 3600,
};

/** The faults that are off unless named (absent from DEFAULT_FAULTS): `--fault` takes them too. */
export const OPTIONAL_FAULTS: readonly (keyof FaultRates)[] = [
  'outageProviders',
  'forgedFirst',
  'producerClockSkew',
  'producerClockSkewSeconds',
  'sdkRetryOfCommit',
  'parserChangeAtSeconds',
  'providerAnswerMs',
  'deployWindowSeconds',
  'rollbackAtSeconds',
  'dlqForgeries',
  'sharedEventIds',
];

export const DEFAULT_FAULTS: FaultRates = {
  // Per call; a batch of 10 records makes ~30 calls, so about 1 invocation in 10 dies.
  // At 0.02 (1 in 2) crashes of batch-mates burn a FIFO record's 5 receives on main
  // and applied records are dead-lettered (`--fault crashPerCall=0.02`, seed 5).
  crashPerCall: 0.003,
  // A third of the crash rate, on the functions only: about 1 consumer batch in 30 has a call that hangs
  // (cut at its record deadline; without the deadline, the batch is stopped by its timeout).
  timeoutPerCall: 0.001,
  transactionConflict: 0.02,
  sqsSendFailure: 0.01,
  sqsDuplicate: 0.02,
  streamRedelivery: 0.02,
  streamRecordLost: 0.01,
  producerResend: 0.02,
  responseLost: 0.05,
  providerFailure: 0.02,
  // A window in 3 schedules of 10, from 10 s to 10 minutes: far past the old
  // budget of about 30 s, inside the 15 minutes the consumers now guarantee.
  // Nothing live may be dead-lettered. (Longer windows: `longOutageChance`.)
  providerOutages: 0.3,
  providerOutageSeconds: [10, 600],
  longOutageChance: 0.1,
  longOutageSeconds: [1200, 1800],
  // Retries from a new session of the same role: one caller (callerOf maps the session to its role).
  credentialRotation: 0.2,
  poisonMessages: 2,
};

/**
 * The operator redrives the consumers' DLQs an hour after the last order arrived: after
 * every outage window has closed and every message it dead-lettered got there,
 * and after the cancels of those orders were applied.
 */
export const DEFAULT_REDRIVE_AFTER_SECONDS = 3600;

export const MECHANISM_GUARDS: MechanismGuards = {
  callerScope: 'principal',
  apiIdempotency: 'powertools',
  inboxClaim: true,
  dedupeOn: 'eventId',
  providerCompletion: true,
  retryBudget: 'budget',
  recordDeadline: true,
  dedupeHorizon: true,
  providerCallLease: true,
  fingerprint: true,
  queueSenders: true,
  futureStamps: true,
  requestToken: true,
  ownCommit: true,
  sentFingerprint: true,
  doneMarkBound: true,
  legacyKeyLookup: true,
  rollbackSafeUpgrade: true,
  dlqSenderPolicy: true,
  tenantInProviderKey: true,
};

/** The engine's defaults: 200 intents at 20 a second, the default faults, every guard on, the deployed settings. */
export const ENGINE_DEFAULTS = {
  orders: 200,
  arrivalsPerSecond: 20,
  cancelChance: 0.2,
  faults: DEFAULT_FAULTS,
  guards: MECHANISM_GUARDS,
  settings: DEFAULT_SETTINGS,
  redriveDlqsAfterSeconds: DEFAULT_REDRIVE_AFTER_SECONDS,
} satisfies Partial<SimulationOptions>;

/**
 * What a domain gives the simulation: its consumers and events, the table holding its outbox, its
 * clients (how intents become requests to its API), how to forge one of its events, its entities for
 * the proof kit's invariants, and its own guards. Everything else (virtual time, the queues and the
 * stream, the relay and the sweeper, the consumers and their providers, the faults, the mechanism's
 * invariants) is the engine's. The neutral probe domain's: PROBE_DOMAIN in test/simulation/probe-world.ts.
 */
export interface SimulationDomain<O extends SimulationOptions = SimulationOptions> {
  /** The consumers the world deploys (by default) and the event types the producers write. */
  readonly consumers: readonly ConsumerSpec[];
  readonly eventTypes: readonly string[];
  /** The domain's table holding its entities and their outbox items, and its entities' partition-key prefix. */
  readonly outboxTable: string;
  readonly entityPartitionPrefix: string;
  /** The domain's clients on this world: `start(index)` sends intent `index`; `entityIdOf` names its entity. */
  clients(world: World<O>): DomainClients;
  /** The `forgedFirst` fault: the same event (same eventId) with other content its consumers still accept. */
  forge(event: EventEnvelope): EventEnvelope;
  /** The domain's entities as stored, for the proof kit's invariants. */
  entities(db: MemoryDynamoDb): Record<string, unknown>[];
  /** The domain's own guards switched off: conditions the in-memory DynamoDB ignores (undefined: none). */
  conditionsIgnored?(options: O): ((table: string, key: Record<string, unknown>) => boolean) | undefined;
  /**
   * How the proof kit judges this domain's runs, for the world's consumer list (its invariants may
   * depend on who consumes what). Default: the example's proof domain (`proof` in its tooling module).
   */
  proof?(consumers: readonly ConsumerSpec[]): ProofDomain;
}

/** The request API Gateway hands the function for an idempotent POST: IAM-signed by `userArn`, the key in its header. */
export function idempotentPostEvent(
  userArn: string,
  key: string,
  path: string,
  body: Record<string, unknown>,
): APIGatewayProxyEvent {
  return apiEvent({
    method: 'POST',
    path,
    caller: userArn,
    headers: { 'Content-Type': 'application/json', 'Idempotency-Key': key },
    body: JSON.stringify(body),
  });
}

/** A client of the idempotent API: its caller, its key, its session (rotated credentials), its tries in flight. */
export interface ApiClient {
  readonly caller: string;
  readonly key: string;
  session: number;
  /** Chains of tries in flight or waiting to be retried. */
  chains: number;
  /** Answered 201 at least once. */
  created: boolean;
}

/** What one POST sends and how: the domain's deployed handler on the invocation's clients, its error classes. */
export interface ApiPost {
  /** The invocation's name prefix (`api-place`). */
  readonly kind: string;
  readonly path: string;
  readonly body: Record<string, unknown>;
  readonly timeoutSeconds: number;
  handler(invocation: Invocation): (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
  /** The status a thrown error stands for (no answer for a crash); an unexpected one is the domain's to record. */
  statusOf(error: unknown, who: string): number | 'no-response';
  /** The client is through with this chain of tries. */
  done(): void;
}

/** A client retries a 409 (its key in flight) this many times: past a crashed attempt's 10 s in-progress record. */
const MAX_IN_FLIGHT_RETRIES = 20;

/** What the domain's clients give the world. */
export interface DomainClients {
  /** Starts intent `index` (at its arrival time): its requests, retries, later changes. */
  start(index: number): void;
  /** The entity a caller's intent under `key` must map to (the proof kit groups by it). */
  entityIdOf(caller: string, key: string): string;
}

interface StreamRecord extends StreamRecordBase {
  event: EventEnvelope;
  /** The item as the stream carries it (NEW_IMAGE). */
  image: Record<string, AttributeValue>;
}

/** The retry budget before the fix (guard `retryBudget: 'seconds'`): 5 receives, full jitter from 2 s, capped at 60 s (FIFO) and 300 s. */
const OLD_MAX_RECEIVE_COUNT = 5;
const oldBackoff = (fifo: boolean) => ({ baseSeconds: 2, capSeconds: fifo ? 60 : 300 });
/**
 * Pollers per consumer queue: the simulation runs 3, fewer where the spec's
 * maxConcurrency is lower (the event source mapping never runs more batches
 * at once than that). Lambda starts an SQS mapping at 5 concurrent batches and
 * scales up from there; 3 keeps batches of one queue contending while the
 * traces docs/simulation.md cites stay as they were.
 */
const SIMULATED_POLLERS = 3;
const STREAM_SHARDS = 2;
const DAY_MS = 86_400_000;
/** Long runs: how often the simulated DynamoDB TTL looks for expired items, and how late it may delete one. */
const TTL_SWEEP_EVERY_MS = 3_600_000;
const DEFAULT_TTL_DELETION_DELAY_SECONDS = 2 * 86_400;
/** Stands for the table the deployed consumers log provider calls to; the simulated providers replace it. */
const PROVIDER_LOG_TABLE = 'ProviderLog';
/** One consumer of the list, simulated: its queue and DLQ as the stack configures them, its environment, its function. */
export interface SimConsumer {
  spec: ConsumerSpec;
  queue: SimQueue;
  deadLetterQueue: SimQueue;
  config: ConsumerConfig;
  makeHandler: HandlerFactory;
}

export class World<O extends SimulationOptions = SimulationOptions> {
  readonly scheduler: Scheduler;
  readonly db = new MemoryDynamoDb();
  /** By spec name, in the list's order. */
  readonly consumers = new Map<string, SimConsumer>();
  /** The relay's routes (ENV.consumerRoutes) to the simulated queues. */
  readonly routes: ConsumerRoute[];
  readonly relayFailures: SimQueue;
  private readonly queues = new Map<string, SimQueue>();
  private readonly stream: StreamMapping<StreamRecord>;
  private readonly providers: SimProviders;
  /** The intents' requests, as the proof kit's plan (the domain's clients push them). */
  readonly plan: PlannedRequest[] = [];
  /** What each request got back (the domain's clients push them). */
  readonly observations: Observation[] = [];
  /** Errors no fault explains (a 500 from the API): each one fails the schedule. */
  readonly unexpectedErrors: string[] = [];
  /** Clients still busy (the domain's clients count themselves in and out): the world drains after them. */
  activeClients = 0;
  private pendingOutbox = 0;
  private invocations = 0;
  private stopped = false;
  /** The operator's redrives still to come, and when the next one is. */
  private redrivesLeft = 0;
  private redriveAt = 0;
  /** Effects items DynamoDB's TTL deleted (long runs only), by pk: the last image of each. */
  private readonly ttlDeleted = new Map<string, Item>();
  /** When the TTL deletes each expired item it has seen (drawn once per item and expiry). */
  private readonly ttlDeleteAt = new Map<string, number>();
  readonly now = (): Date => this.scheduler.date();
  private readonly clients: DomainClients;
  private readonly outboxConfig: OutboxConfig;
  private readonly relayFaults: RelayFaults;
  private readonly claimTtlSeconds: number;
  private readonly transactionWithoutGuards: InvocationFaults['withoutGuards'];
  /** Per consumer and eventId, forged copies that reached a queue (the sender policy switched off). */
  private readonly forged = new Set<string>();
  /** Per provider key, the last 2xx a live invocation heard and had not recorded yet (see `double-send`). */
  private readonly answered = new Map<string, { invocation: Invocation; excused: boolean }>();
  private readonly doubleSends: string[] = [];
  private readonly miscounts: string[] = [];
  /** Per lease holder (one try of one record): the claim its own retry was refused on, until the try ends. */
  private readonly ownCommitsRefused = new Map<string, string>();
  /** Which release each consumer invocation runs (the deploy and rollback faults). */
  private readonly releases: Releases;
  /** The events the relay got from the stream (kept only under the `dlqForgeries` fault, which forges them). */
  private readonly published: EventEnvelope[] = [];

  /** `consumerSpecs`: who consumes what (default: the domain's list); checked as the stack checks it. */
  constructor(
    readonly options: O,
    private readonly domain: SimulationDomain<O>,
    consumerSpecs: readonly ConsumerSpec[] = domain.consumers,
  ) {
    validateConsumerSpecs(consumerSpecs, domain.eventTypes);
    this.scheduler = new Scheduler(options.seed, options.keepTrace);
    this.providers = new SimProviders(this.scheduler, {
      memorySeconds: options.settings.providerMemorySeconds,
      failureChance: options.faults.providerFailure,
      answerMs: options.faults.providerAnswerMs,
    });
    createSimulatedTables(this.db, domain.outboxTable);
    const s = options.settings;
    const visibility = (window: number) => 6 * s.consumerTimeoutSeconds + window;
    // As packages/cdk/src/consumer-pipelines.ts derives them; the guard-off budget is the old flat 5 receives.
    const attempts = attemptsForBudget(s.retryBudget);
    const oldBudget = options.guards.retryBudget === 'seconds';
    const retention = 4 * 86400;
    const dlqRetention = 14 * 86400;
    // As packages/cdk/src/consumer-pipelines.ts derives them, with its 3-day redrive allowance.
    const dedupe = dedupeWindow({
      sourceRetentionSeconds: retention,
      deadLetterRetentionSeconds: dlqRetention,
      redriveAllowanceSeconds: 3 * 86400,
    });
    this.claimTtlSeconds = dedupe.claimTtlSeconds;
    this.transactionWithoutGuards = this.guardSwitchesOnTransactions();
    for (const spec of consumerSpecs) {
      const names = queueNamesOf(spec);
      const deadLetterQueue = this.queue({
        name: names.deadLetterQueue,
        fifo: spec.fifo,
        visibilityTimeoutSeconds: 30,
        retentionSeconds: dlqRetention,
      });
      const queue = this.queue({
        name: names.queue,
        fifo: spec.fifo,
        visibilityTimeoutSeconds: visibility(spec.batchingWindowSeconds),
        maxReceiveCount: oldBudget
          ? OLD_MAX_RECEIVE_COUNT
          : spec.fifo
            ? fifoMaxReceiveCount(attempts, spec.batchSize)
            : attempts,
        retentionSeconds: retention,
        deadLetterQueue,
        // As packages/cdk/src/queue-defaults.ts configures a FIFO source queue; a standard queue delivers duplicates.
        ...(spec.fifo
          ? { deduplicationScope: 'messageGroup' as const }
          : { duplicateChance: options.faults.sqsDuplicate }),
      });
      // What the stack puts in the function's environment (packages/cdk/src), naming the simulated tables and queues.
      const config: ConsumerConfig = {
        consumer: spec.name,
        fifo: spec.fifo,
        effectsTable: EFFECTS_TABLE,
        providerTable: PROVIDER_LOG_TABLE,
        inboxTtlSeconds: dedupe.claimTtlSeconds,
        dedupeHorizonSeconds: dedupe.horizonSeconds,
        queueUrl: queue.url,
        deadLetterQueueUrl: deadLetterQueue.url,
        backoff: { baseSeconds: s.retryBudget.baseSeconds, capSeconds: s.retryBudget.capSeconds },
        maxAttempts: attempts,
      };
      this.consumers.set(spec.name, { spec, queue, deadLetterQueue, config, makeHandler: handlerFactory(spec) });
    }
    this.routes = consumerRoutes(consumerSpecs);
    this.releases = new Releases(
      options.faults,
      options.guards,
      consumerSpecs.map((spec) => spec.name),
      (min, max) => this.scheduler.between(min, max),
    );
    this.outboxConfig = {
      outboxTable: domain.outboxTable,
      entityPartitionPrefix: domain.entityPartitionPrefix,
      routes: this.routes,
      dispatchedRetentionSeconds: DEFAULT_DISPATCHED_RETENTION_SECONDS,
    };
    // The relay's own fault decorators (the fault-injection build's), rolling the producer-resend rate on the seed.
    const resendPlan = { ...NO_FAULTS, producerResend: options.faults.producerResend, random: this.scheduler.random };
    this.relayFaults = relayFaults({
      source: { current: () => Promise.resolve(resendPlan) },
      crash: (where) => {
        throw new Error(`the simulation injects no relay crash (${where})`);
      },
    });
    this.relayFailures = this.queue({
      name: 'relay-on-failure',
      fifo: false,
      visibilityTimeoutSeconds: 30,
      retentionSeconds: dlqRetention,
    });
    this.stream = new StreamMapping<StreamRecord>(
      this.scheduler,
      {
        shards: STREAM_SHARDS,
        batchSize: s.relayBatchSize,
        retryAttempts: s.relayRetryAttempts,
        maxRecordAgeSeconds: s.relayMaxRecordAgeSeconds,
        bisectOnFunctionError: s.relayBisectOnFunctionError,
        redeliveryChance: options.faults.streamRedelivery,
      },
      (batch) => this.relayBatch(batch),
      (records, reason) =>
        // What the mapping sends is metadata about the batch; the event ids stand for it here.
        this.relayFailures.send(JSON.stringify({ onFailure: records.map((r) => r.event.eventId) }), {
          attributes: { failureCause: `stream ${reason}` },
        }),
    );
    this.db.onChange = (change) => {
      if (change.table !== domain.outboxTable) return;
      const wasPending = change.oldImage?.pendingShard !== undefined;
      const isPending = change.newImage?.pendingShard !== undefined;
      this.pendingOutbox += Number(isPending) - Number(wasPending);
      if (change.oldImage === undefined && change.newImage?.entity === 'OUTBOX') this.streamInsert(change.newImage);
    };
    const ignored = domain.conditionsIgnored?.(options);
    if (ignored !== undefined) this.db.ignoreConditionOn = ignored;
    this.clients = domain.clients(this);
  }

  /** Every provider a consumer of this world names: where outage windows fall unless the faults say otherwise. */
  private get providerNames(): string[] {
    return [...new Set([...this.consumers.values()].flatMap(({ spec }) => spec.providers ?? []))];
  }

  /**
   * The ledger transactions as the code without each switched-off guard sent them: no
   * ClientRequestToken; inbox claims without their fingerprint; claims that expire counted from
   * the claim alone. Undefined with those guards on.
   */
  private guardSwitchesOnTransactions(): InvocationFaults['withoutGuards'] {
    const { fingerprint, futureStamps, requestToken } = this.options.guards;
    if (fingerprint && futureStamps && requestToken) return undefined;
    return (input) => ({
      ...input,
      ClientRequestToken: requestToken ? input.ClientRequestToken : undefined,
      TransactItems: input.TransactItems?.map((item) => {
        const put = item.Put;
        if (put?.TableName !== EFFECTS_TABLE || !String(put.Item?.pk).startsWith('INBOX#')) return item;
        const claim: Record<string, unknown> = { ...put.Item };
        if (!fingerprint) delete claim[FINGERPRINT_ATTRIBUTE];
        if (!futureStamps) claim[INBOX_TTL_ATTRIBUTE] = expiresAfter(this.now(), this.claimTtlSeconds);
        return { ...item, Put: { ...put, Item: claim } };
      }),
    });
  }

  private queue(options: ConstructorParameters<typeof SimQueue>[1]): SimQueue {
    const queue = new SimQueue(this.scheduler, options);
    this.queues.set(queue.url, queue);
    return queue;
  }

  /** One invocation; `timeoutSeconds` for the functions Lambda stops at their timeout (not the API's requests). */
  invocation(kind: string, timeoutSeconds?: number): Invocation {
    this.invocations += 1;
    const f = this.options.faults;
    return new Invocation(
      `${kind}#${this.invocations}`,
      this.scheduler,
      this.db,
      this.queues,
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

  async run(): Promise<SimulationResult> {
    const { scheduler, options } = this;
    const savedRandom = Math.random;
    const savedNow = Date.now;
    const savedIdempotencyDisabled = process.env.POWERTOOLS_IDEMPOTENCY_DISABLED;
    const savedRoutes = process.env[ENV.consumerRoutes];
    // The real code draws backoff jitter from Math.random: the seed must decide it too.
    Math.random = scheduler.random;
    // Powertools' idempotency layer reads the time from Date.now (record expiry, in-progress expiry, its put's condition).
    Date.now = () => EPOCH_MS + scheduler.now;
    // The relay's routing as the stack hands it over, for this world's consumer list.
    process.env[ENV.consumerRoutes] = JSON.stringify(this.routes);
    // Powertools' own off switch, read when a handler's idempotency config is built: the 'bypassed' break.
    if (options.guards.apiIdempotency === 'bypassed') process.env.POWERTOOLS_IDEMPOTENCY_DISABLED = 'true';
    try {
      const arrivalsMs = (options.orders / options.arrivalsPerSecond) * 1000;
      for (let i = 0; i < options.orders; i++)
        scheduler.at(scheduler.between(0, arrivalsMs), () => this.clients.start(i));
      const windows = Math.floor(options.faults.providerOutages);
      const extraWindow = scheduler.chance(options.faults.providerOutages - windows) ? 1 : 0;
      for (let o = 0; o < windows + extraWindow; o++) {
        const provider = scheduler.pick(options.faults.outageProviders ?? this.providerNames);
        const start = scheduler.between(0, arrivalsMs);
        const long = scheduler.chance(options.faults.longOutageChance);
        const [min, max] = long ? options.faults.longOutageSeconds : options.faults.providerOutageSeconds;
        const end = start + scheduler.between(min * 1000, max * 1000);
        this.providers.outages.push({ provider, start, end });
        const kind = long ? 'provider-outage-beyond-budget' : 'provider-outage';
        scheduler.at(start, () => scheduler.fault(kind, `${provider} until ${(end / 1000).toFixed(1)}s`));
      }
      for (let p = 0; p < options.faults.poisonMessages; p++) {
        scheduler.at(scheduler.between(0, arrivalsMs), () => {
          const body = JSON.stringify({ poison: true, n: p });
          for (const { queue } of this.consumers.values())
            if (queue.options.fifo) queue.send(body, { groupId: `poison-${p}`, dedupId: `poison-${p}` });
            else queue.send(body);
          scheduler.fault('poison-message', `${body} to ${everyQueue(this.consumers.size)}`);
        });
      }
      // Round by round over the consumers, so the pollers' start times are drawn in one order per list.
      for (let c = 0; c < SIMULATED_POLLERS; c++)
        for (const consumer of this.consumers.values())
          if (c < Math.min(SIMULATED_POLLERS, consumer.spec.maxConcurrency))
            scheduler.at(scheduler.between(0, 200), () => this.pollQueue(consumer));
      this.stream.start();
      scheduler.at(60_000, () => this.sweep());
      const redrives = this.redriveTimes(arrivalsMs);
      this.redrivesLeft = redrives.length;
      this.redriveAt = redrives[0] ?? 0;
      for (const at of redrives) scheduler.at(at, () => this.redrive(redrives));
      const { dlqForgeries: forgeries = 0 } = options.faults;
      if (forgeries > 0 && redrives.length > 0)
        scheduler.at(Math.max(0, redrives[0] - 60_000), () => this.forgeIntoDlqs(forgeries));
      if (options.longRedrive !== undefined)
        scheduler.at(TTL_SWEEP_EVERY_MS, () =>
          this.sweepTtl(options.longRedrive!.ttlDeletionDelaySeconds ?? DEFAULT_TTL_DELETION_DELAY_SECONDS),
        );
      const deadline = (redrives[redrives.length - 1] ?? arrivalsMs) + 6 * 3600 * 1000;
      scheduler.at(arrivalsMs, () => this.checkDrained(deadline));
      await scheduler.run();
      return this.result();
    } finally {
      Math.random = savedRandom;
      Date.now = savedNow;
      restoreEnv('POWERTOOLS_IDEMPOTENCY_DISABLED', savedIdempotencyDisabled);
      restoreEnv(ENV.consumerRoutes, savedRoutes);
    }
  }

  /**
   * When the operator redrives the DLQs (virtual ms): `longRedrive`'s every
   * few days, or once, `redriveDlqsAfterSeconds` after the last order arrived.
   */
  private redriveTimes(arrivalsMs: number): number[] {
    const { longRedrive, redriveDlqsAfterSeconds } = this.options;
    if (longRedrive !== undefined)
      return Array.from(
        { length: longRedrive.redrives },
        (_, k) => arrivalsMs + (k + 1) * longRedrive.everyDays * DAY_MS,
      );
    return redriveDlqsAfterSeconds === undefined ? [] : [arrivalsMs + redriveDlqsAfterSeconds * 1000];
  }

  /** The operator's redrive of every consumer's DLQ: each message goes back to its queue as a new message. */
  private redrive(redrives: readonly number[]): void {
    this.redrivesLeft -= 1;
    this.redriveAt = redrives[redrives.length - this.redrivesLeft] ?? 0;
    let moved = 0;
    for (const { queue, deadLetterQueue } of this.consumers.values()) moved += deadLetterQueue.redriveTo(queue);
    this.scheduler.fault('dlq-redrive', `${moved} messages back to their queues`);
  }

  /**
   * DynamoDB's TTL on the Effects table (long runs only): every hour, each
   * item whose `expiresAt` (epoch seconds) has passed gets a deletion time,
   * drawn once, up to `maxDelaySeconds` after its expiry (late, never early),
   * and is deleted once that time has come, if it still carries the same
   * expiry. A delete is a write like any other (the stream would see it).
   */
  private sweepTtl(maxDelaySeconds: number): void {
    if (this.stopped) return;
    const now = EPOCH_MS + this.scheduler.now;
    for (const item of this.db.items(EFFECTS_TABLE)) {
      const expiresAt = item[INBOX_TTL_ATTRIBUTE];
      if (typeof expiresAt !== 'number' || expiresAt * 1000 > now) continue;
      const id = `${String(item.pk)}\n${String(item.sk)}\n${expiresAt}`;
      let deleteAt = this.ttlDeleteAt.get(id);
      if (deleteAt === undefined) {
        deleteAt = expiresAt * 1000 + this.scheduler.between(0, maxDelaySeconds * 1000);
        this.ttlDeleteAt.set(id, deleteAt);
      }
      if (deleteAt > now) continue;
      this.ttlDeleteAt.delete(id);
      try {
        this.db.execute(
          new DeleteCommand({
            TableName: EFFECTS_TABLE,
            Key: { pk: item.pk, sk: item.sk },
            ConditionExpression: '#ttl = :ttl',
            ExpressionAttributeNames: { '#ttl': INBOX_TTL_ATTRIBUTE },
            ExpressionAttributeValues: { ':ttl': expiresAt },
          }),
        );
      } catch {
        continue; // written since (a new expiry): not this deletion's item any more
      }
      this.ttlDeleted.set(String(item.pk), item);
      const late = (now - expiresAt * 1000) / 3_600_000;
      this.scheduler.trace(`dynamodb-ttl deleted ${String(item.pk)} (${late.toFixed(1)} h after its expiry)`);
    }
    this.scheduler.at(TTL_SWEEP_EVERY_MS, () => this.sweepTtl(maxDelaySeconds));
  }

  // ---- the API's callers ----------------------------------------------------

  /**
   * The identity a client's session signs with: an assumed-role session of
   * the client's role (the API's `callerOf` maps it to the role); with the
   * session-scope guard off, an identity per session, which is what scoping
   * to the session makes of it.
   */
  signerOf(client: string, session: number): string {
    return this.options.guards.callerScope === 'session'
      ? `arn:aws:iam::111122223333:user/${client}.session-${session}`
      : `arn:aws:sts::111122223333:assumed-role/${client}/session-${session}`;
  }

  /** Who the API says is calling: the real `callerOf` on the request context that identity produces. */
  callerOf(client: string, session: number): string {
    const event = { requestContext: { identity: { userArn: this.signerOf(client, session) } } };
    const caller = callerOf(event as unknown as APIGatewayProxyEvent);
    if (caller === undefined) throw new Error('callerOf found no caller on a simulated request');
    return caller;
  }

  // ---- a client's idempotent POST ------------------------------------------

  /**
   * One POST of a client's intent through the domain's deployed handler, then what the client does with
   * the answer: retry the same key after no answer or a 5xx, and after a 409 (in flight) once its
   * Retry-After has passed; a retry may come from a new session (credential rotation); an answer may be
   * lost (response-lost). `done(status)` runs once the client is through with this chain of tries.
   */
  post(client: ApiClient, request: ApiPost, op: PlannedRequest['op'], attempt: number, continuesChain = false): void {
    const { scheduler } = this;
    const index = this.plan.length;
    if (!continuesChain) client.chains += 1;
    if (attempt > 1 && scheduler.chance(this.options.faults.credentialRotation)) {
      client.session += 1;
      scheduler.fault('credential-rotation', `${client.caller} now signs as session ${client.session}`);
    }
    // The intent is the client's, whatever session signs it (the verification groups by plan.caller).
    this.plan.push({
      index,
      op,
      caller: client.caller,
      method: 'POST',
      path: request.path,
      idempotencyKey: client.key,
      body: request.body,
    });
    const invocation = this.invocation(request.kind, request.timeoutSeconds);
    const startedAt = scheduler.now;
    const userArn = this.signerOf(client.caller, client.session);
    scheduler.trace(`${invocation.name} ${userArn} POST ${request.path} key=${client.key} (${op}, attempt ${attempt})`);
    const handler = request.handler(invocation);
    const context = this.contextOf(invocation, request.timeoutSeconds);
    invocation
      .run(() => handler(idempotentPostEvent(userArn, client.key, request.path, request.body), context))
      .then(
        (response) => {
          if (response.statusCode === 500 && !invocation.crashed)
            this.unexpectedErrors.push(`${invocation.name}: 500 ${response.body}`);
          return {
            status: response.statusCode as number | 'no-response',
            body: response.body as string | undefined,
            replayed: response.headers?.['Idempotent-Replayed'] === 'true',
          };
        },
        (error) => ({ status: request.statusOf(error, invocation.name), body: undefined, replayed: false }),
      )
      .then((answer) => {
        if (invocation.crashed || invocation.timedOut)
          answer = { status: 'no-response', body: undefined, replayed: false };
        else if (answer.status !== 'no-response' && scheduler.chance(this.options.faults.responseLost)) {
          scheduler.fault('response-lost', `${invocation.name} ${client.key}`);
          answer = { status: 'no-response', body: undefined, replayed: false };
        }
        this.observations.push({
          index,
          status: answer.status,
          body: answer.body,
          replayed: answer.replayed,
          startedAt,
          latencyMs: scheduler.now - startedAt,
        });
        scheduler.trace(
          `${invocation.name} answered ${answer.status}${answer.replayed ? ' (replayed)' : ''} to ${client.caller} key=${client.key}`,
        );
        if (answer.status === 201) client.created = true;
        else if (answer.status === 409 && attempt < MAX_IN_FLIGHT_RETRIES) {
          // In flight elsewhere (or a crashed attempt's record, until its in-progress expiry): Retry-After 1 s.
          scheduler.at(scheduler.between(1000, 2000), () =>
            this.post(client, request, 'retry-sequential', attempt + 1, true),
          );
          return;
        } else if ((answer.status === 'no-response' || answer.status >= 500) && attempt < 8) {
          // The retry continues this chain: the client is still busy with the key.
          scheduler.at(scheduler.between(200, 2000 * attempt), () =>
            this.post(client, request, 'retry-sequential', attempt + 1, true),
          );
          return;
        }
        client.chains -= 1;
        if (client.chains === 0) request.done();
      });
  }

  // ---- the producer's clock ----------------------------------------------

  /** How far off the clock of the API instance producing this client's events is (the `producerClockSkew` fault). */
  producerClockSkewMs(index: number): number {
    const { producerClockSkew = 0, producerClockSkewSeconds = [0, 0] } = this.options.faults;
    if (producerClockSkew <= 0 || !this.scheduler.chance(producerClockSkew)) return 0;
    const skewMs = this.scheduler.between(producerClockSkewSeconds[0] * 1000, producerClockSkewSeconds[1] * 1000);
    this.scheduler.fault('producer-clock-skew', `key-${index}: ${Math.round(skewMs / 1000)} s`);
    return skewMs;
  }

  /** A producer's clock: the world's, off by `skewMs` (from producerClockSkewMs). */
  producerClock(skewMs: number): () => Date {
    return skewMs === 0 ? this.now : () => new Date(this.now().getTime() + skewMs);
  }

  // ---- stream, relay, sweeper ---------------------------------------------

  private streamInsert(item: Item): void {
    const event = item.event as EventEnvelope;
    const { forgedFirst = 0, dlqForgeries: forgeries = 0 } = this.options.faults;
    if (forgedFirst > 0 && this.scheduler.chance(forgedFirst)) this.forgeFirst(event);
    if (forgeries > 0) this.published.push(event);
    if (this.scheduler.chance(this.options.faults.streamRecordLost)) {
      this.scheduler.fault('stream-record-lost', event.eventId);
      return;
    }
    // Per-key order: an order's records always land on one shard.
    this.stream.insert(hashOf(String(item.pk)), {
      sequenceNumber: this.stream.nextSequenceNumber(),
      event,
      image: marshall(item, { removeUndefinedValues: true }) as Record<string, AttributeValue>,
      at: this.scheduler.now,
    });
  }

  /**
   * The `forgedFirst` fault: before the relay publishes `event`, a copy with other content under its
   * eventId (one more of its first line) goes to every consumer queue that takes it, under a
   * deduplication id of its own; or is denied by the queues' sender policy, which lets only the
   * relay and the sweeper send. (A forger who also reused the real deduplication id would make a
   * FIFO queue drop the real message within SQS's 5-minute window: only the policy prevents that.)
   */
  private forgeFirst(event: EventEnvelope): void {
    const forged = this.domain.forge(event);
    for (const { spec, queue } of this.consumers.values()) {
      if (!spec.eventTypes.includes(event.type)) continue;
      if (this.options.guards.queueSenders) {
        this.scheduler.fault('forged-send-denied', `${event.eventId} to ${spec.name}`);
        continue;
      }
      const body = JSON.stringify(forged);
      if (queue.options.fifo) queue.send(body, { groupId: event.entityId, dedupId: `${event.eventId}.forged` });
      else queue.send(body);
      this.forged.add(`${spec.name}\n${event.eventId}`);
      this.scheduler.fault('forged-first', `${event.eventId} to ${spec.name}`);
    }
  }

  /**
   * The `dlqForgeries` fault: per consumer, `count` published events it takes, each forged into its DLQ
   * twice (a known eventId with other content, a new eventId), or refused by the DLQ's sender policy.
   */
  private forgeIntoDlqs(count: number): void {
    for (const { spec, deadLetterQueue } of this.consumers.values()) {
      const taken = this.published.filter((e) => spec.eventTypes.includes(e.type));
      for (let n = 0; n < count && taken.length > 0; n++) {
        const event = this.scheduler.pick(taken);
        for (const forged of dlqForgeries(event, (e) => this.domain.forge(e))) {
          if (!dlqAcceptsForger(this.options.guards.dlqSenderPolicy)) {
            this.scheduler.fault('forged-dlq-send-denied', `${forged.eventId} to ${spec.name}`);
            continue;
          }
          const body = JSON.stringify(forged);
          if (deadLetterQueue.options.fifo)
            deadLetterQueue.send(body, { groupId: forged.entityId, dedupId: `${forged.eventId}.dlq-forged-${n}` });
          else deadLetterQueue.send(body);
          this.scheduler.fault('forged-into-dlq', `${forged.eventId} to ${spec.name}`);
        }
      }
    }
  }

  /**
   * One relay invocation: its batch response, or a function error when it
   * crashed, threw or was stopped by its timeout (the mapping then bisects).
   */
  private async relayBatch(batch: StreamRecord[]): Promise<BatchOutcome> {
    const invocation = this.invocation('relay', this.options.settings.relayTimeoutSeconds);
    this.scheduler.trace(
      `${invocation.name} got ${batch.length} stream records ${batch[0].sequenceNumber}..${batch[batch.length - 1].sequenceNumber}`,
    );
    const wiring = this.outboxWiring(invocation);
    // The resend fault publishes through `publisherWith`: counted here as it goes out.
    const relay = makeRelayHandler(
      { ...wiring, publisherWith: (o) => this.countingResends(wiring.publisherWith(o)) },
      this.relayFaults,
    );
    try {
      const response = await invocation.run(() =>
        relay(streamEvent(batch), this.contextOf(invocation, this.options.settings.relayTimeoutSeconds)),
      );
      if (invocation.crashed) {
        this.scheduler.trace(`${invocation.name} crashed: function error`);
        return { kind: 'function-error' };
      }
      const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
      const firstFailed = batch.findIndex((r) => failed.has(r.sequenceNumber));
      return { kind: 'response', failedFrom: firstFailed === -1 ? batch.length : firstFailed };
    } catch (error) {
      this.scheduler.trace(`${invocation.name} failed: ${String(error)}`);
      return { kind: 'function-error' };
    }
  }

  private countingResends(publisher: EventPublisher): EventPublisher {
    return {
      publish: (events) => {
        for (const e of events) this.scheduler.fault('producer-resend', e.eventId);
        return publisher.publish(events);
      },
    };
  }

  private sweep(): void {
    if (this.stopped) return;
    // Weeks of virtual time: while nothing is pending in the outbox and no client is busy, a sweep
    // finds nothing, so it is skipped (40,000 empty sweeps a month would be most of the run's events).
    if (this.options.longRedrive !== undefined && this.pendingOutbox === 0 && this.activeClients === 0) {
      this.scheduler.at(60_000, () => this.sweep());
      return;
    }
    const invocation = this.invocation('sweeper', this.options.settings.sweeperTimeoutSeconds);
    const sweeper = makeSweeperHandler(this.outboxWiring(invocation), {
      minAgeSeconds: this.options.settings.sweepAgeSeconds,
    });
    invocation
      .run(() => sweeper(undefined, this.contextOf(invocation, this.options.settings.sweeperTimeoutSeconds)))
      .then(
        (result) => {
          if (result.republished > 0) this.scheduler.trace(`${invocation.name} ${JSON.stringify(result)}`);
        },
        (error) => this.scheduler.trace(`${invocation.name} failed: ${String(error)}`),
      );
    this.scheduler.at(60_000, () => this.sweep());
  }

  private outboxWiring(invocation: Invocation): OutboxWiring {
    return outboxWiring(this.outboxConfig, { documents: invocation.documents, sqs: invocation.sqs, now: this.now });
  }

  // ---- queue consumers ----------------------------------------------------

  /** One poller of a consumer's event source mapping: a batch of up to the spec's size, then the next. */
  private pollQueue(consumer: SimConsumer): void {
    if (this.stopped) return;
    const { queue } = consumer;
    const messages = queue.receive(consumer.spec.batchSize);
    if (messages.length === 0) {
      queue.waitForMessages(() => this.scheduler.at(this.scheduler.between(1, 20), () => this.pollQueue(consumer)));
      return;
    }
    void this.consumerBatch(consumer, messages).then(() =>
      this.scheduler.at(this.scheduler.between(1, 50), () => this.pollQueue(consumer)),
    );
  }

  /**
   * The consumer's wiring (packages/runtime/src/wiring/consumer-wiring.ts) on one invocation's clients,
   * the virtual clock (in-process contention retries wait on it too) and the
   * simulated providers; then the guards switched off, each as the test-only
   * change it stands for. The ledger guards act below the ledgers, on the DynamoDB calls they send
   * (guardedDocuments): each record's use case runs in `applying`, so a call knows whose it is.
   */
  private consumerWiring(
    invocation: Invocation,
    consumer: SimConsumer,
    event: SQSEvent,
    release: Release,
  ): ConsumerWiring {
    const { guards } = this.options;
    const consumerName = consumer.spec.name;
    const guarded = this.guardedDocuments(invocation, consumerName, release);
    const wiring = consumerWiring(consumer.config, {
      // Without the inbox claim: the local runtime's broken build, on the same calls.
      documents: guards.inboxClaim ? guarded : withoutInbox(guarded, consumerName, () => true),
      sqs: invocation.sqs,
      now: this.now,
      sleep: (ms) => invocation.sleep(ms),
      // Without the deadline guard, the records' deadline never fires (the code before it had none).
      setTimer: guards.recordDeadline ? (ms, fire) => invocation.timer(ms, fire) : () => () => undefined,
      random: this.scheduler.random,
      provider: (name) => this.provider(invocation, name, consumerName, release),
    });
    let settings =
      guards.retryBudget === 'seconds' ? this.oldBudget(wiring.settings, consumer.spec.fifo, event) : wiring.settings;
    // Without the horizon, no event is too old: a redrive after its claim's TTL applies it again.
    if (!guards.dedupeHorizon) settings = { ...settings, dedupeHorizonSeconds: Number.POSITIVE_INFINITY };
    // Without the future-stamp guard, any stamp ahead of the clock passes (the claims' TTL: guardSwitchesOnTransactions).
    if (!guards.futureStamps) settings = { ...settings, maxFutureSkewSeconds: Number.POSITIVE_INFINITY };
    // A record's work names its try by the invocation's request id and the record's receipt (queue-consumer.ts).
    const messageIds = new Map(event.Records.map((r) => [leaseHolderOf(invocation.name, r), r.messageId]));
    const messageIdOf = (work: RecordWork): string => {
      const messageId = messageIds.get(work.leaseHolder);
      if (messageId === undefined) throw new Error(`No record of ${invocation.name} holds ${work.leaseHolder}`);
      return messageId;
    };
    return {
      ...wiring,
      settings,
      ledgerOptions:
        release.keys === undefined ? wiring.ledgerOptions : { ...wiring.ledgerOptions, keys: release.keys },
      withFaults: (apply) => {
        const decorated = wiring.withFaults(apply);
        return (applied, work) =>
          applying.run({ event: applied as EventRef, work, messageId: messageIdOf(work) }, async () => {
            const parsed = parsedAsDeployed(applied, this.scheduler.now, this.options.faults.parserChangeAtSeconds);
            // Without the guard, the ledger has no body fingerprint and falls back to the parsed event's.
            const recordWork = guards.sentFingerprint ? work : { ...work, sentFingerprint: undefined };
            const outcome = await decorated(parsed, recordWork);
            this.checkNotOwnCommit(work, outcome);
            return outcome;
          });
      },
    };
  }

  /**
   * The retry budget before the fix: full jitter on the receive count (which
   * may draw 0 s every time), no try count of the consumer's own.
   */
  private oldBudget(settings: ConsumerSettings, fifo: boolean, event: SQSEvent): ConsumerSettings {
    const old = oldBackoff(fifo);
    const receives = new Map(event.Records.map((r) => [r.receiptHandle, Number(r.attributes.ApproximateReceiveCount)]));
    const { control } = settings;
    return {
      ...settings,
      backoff: old,
      tryLimit: undefined,
      control: {
        changeVisibility: (handle, seconds) =>
          control.changeVisibility(
            handle,
            seconds === 0 ? 0 : fullJitterBackoffSeconds(receives.get(handle) ?? 1, old, this.scheduler.random),
          ),
        sendToDeadLetterQueue: (message) => control.sendToDeadLetterQueue(message),
      },
    };
  }

  /** One invocation of a consumer's deployed handler on a received batch, then what Lambda does with its answer. */
  private async consumerBatch(consumer: SimConsumer, messages: SimMessage[]): Promise<void> {
    const { queue } = consumer;
    const timeoutSeconds = this.options.settings.consumerTimeoutSeconds;
    const invocation = this.invocation(consumer.spec.name, timeoutSeconds);
    const event = this.sqsEvent(queue, messages);
    this.traceReceipt(invocation, messages);
    const release = this.releases.at(consumer.spec.name, this.scheduler.now);
    if (this.releases.active) this.scheduler.trace(`${invocation.name} runs the ${release.name} release`);
    const handler = consumer.makeHandler(this.consumerWiring(invocation, consumer, event, release));
    const context = this.contextOf(invocation, timeoutSeconds);
    this.acknowledge(
      invocation,
      queue,
      messages,
      await this.invoke(invocation, () => invocation.run(() => handler(event, context))),
    );
  }

  /** The Lambda context of one invocation: its deadline on the virtual clock, its name as the request id. */
  contextOf(invocation: Invocation, timeoutSeconds: number): Context {
    return lambdaContext(timeoutSeconds * 1000, { clock: () => this.scheduler.now, requestId: invocation.name });
  }

  private traceReceipt(invocation: Invocation, messages: SimMessage[]): void {
    let ids = '';
    for (const m of messages) ids += ` ${m.messageId}`;
    this.scheduler.trace(`${invocation.name} got${ids}`);
  }

  /** The handler's response; undefined when the invocation threw or timed out (nothing is deleted: all come back). */
  private async invoke(
    invocation: Invocation,
    run: () => Promise<SQSBatchResponse>,
  ): Promise<SQSBatchResponse | undefined> {
    try {
      return await run();
    } catch (error) {
      this.scheduler.trace(`${invocation.name} invocation failed: ${(error as Error).name}`);
      return undefined;
    }
  }

  /** The event source mapping: deletes what succeeded; a crash or a thrown invocation deletes nothing. */
  private acknowledge(
    invocation: Invocation,
    queue: SimQueue,
    messages: SimMessage[],
    response: SQSBatchResponse | undefined,
  ): void {
    if (invocation.crashed || response === undefined) {
      const why = invocation.crashed ? 'crashed' : invocation.timedOut ? 'timed out' : 'failed';
      this.scheduler.trace(`${invocation.name} acked nothing (${why})`);
      return;
    }
    const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
    for (const message of messages) if (!failed.has(message.messageId)) queue.delete(message.handle!);
    this.scheduler.trace(`${invocation.name} acked ${messages.length - failed.size}, failed ${failed.size}`);
  }

  /**
   * Guard switches below the ledgers, test-only, on the calls a consumer's ledger sends for the record
   * it is applying: key the record's inbox entry on the SQS messageId instead of the producer's eventId
   * (its claim, lease, done-mark and stale mark); and/or let every duplicate call the provider again
   * (the failed claim answers without `providerCallDoneAt` and `supersededBy`, and every lease is
   * granted unasked); and/or grant every lease unasked (no lease guard); and/or send the done-mark
   * under the record's deadline (no done-mark bound). And what the ledger is answered, watched: a claim
   * that failed on its own try's commit is a miscount; a done-mark that failed is remembered for the
   * `double-send` check. Every other call goes through as sent.
   */
  private guardedDocuments(invocation: Invocation, consumer: string, release: Release): DynamoDBDocumentClient {
    const { dedupeOn, providerCompletion, providerCallLease, doneMarkBound } = this.options.guards;
    const documents = invocation.documents;
    const alwaysGranted = !providerCompletion || !providerCallLease;
    const send = (command: unknown, options?: { abortSignal?: AbortSignal }): Promise<unknown> => {
      const record = applying.getStore();
      if (record === undefined) return documents.send(command as never, options);
      const own = inboxKey(consumer, record.event.eventId, record.event.tenant);
      const rekeyed = dedupeOn === 'eventId' ? own : inboxKey(consumer, record.messageId, record.event.tenant);
      if (command instanceof TransactWriteCommand) {
        const [first, ...effects] = command.input.TransactItems ?? [];
        const claim = first?.Put;
        if (claim?.Item?.pk !== own.pk) return documents.send(command, options);
        const sent =
          dedupeOn === 'eventId'
            ? command
            : new TransactWriteCommand({
                ...command.input,
                TransactItems: [
                  { Put: { ...claim, Item: { ...claim.Item, ...rekeyed, eventId: record.messageId } } },
                  ...effects,
                ],
              });
        const eventId = dedupeOn === 'eventId' ? record.event.eventId : record.messageId;
        return documents.send(sent, options).catch((error: unknown) => {
          throw this.claimRefused(`${consumer}: ${eventId}`, rekeyed, record.work, error);
        });
      }
      if (!(command instanceof UpdateCommand) || command.input.Key?.pk !== own.pk)
        return documents.send(command as never, options);
      const names = Object.values(command.input.ExpressionAttributeNames ?? {});
      const lease = names.includes(PROVIDER_CALL_LEASE_ATTRIBUTE);
      const take = lease && String(command.input.UpdateExpression).startsWith('SET');
      if (take && alwaysGranted) return Promise.resolve({});
      const sent = dedupeOn === 'eventId' ? command : new UpdateCommand({ ...command.input, Key: rekeyed });
      if (lease || !names.includes(PROVIDER_CALL_DONE_ATTRIBUTE)) return documents.send(sent, options);
      const { work } = record;
      const signal = doneMarkBound ? options?.abortSignal : this.underDeadline(work, invocation).signal;
      return this.watchDoneMark(
        keyAsSent(release, consumer, record.event, providerKey(consumer, record.event)),
        invocation,
        work,
        documents.send(sent, { abortSignal: signal }).then(() => undefined),
      );
    };
    return { send } as unknown as DynamoDBDocumentClient;
  }

  /**
   * A claim's transaction failed: on the claim itself (a duplicate), the entry it failed on is read.
   * Without provider completion, that entry is answered without its done-mark and supersede mark, so the
   * ledger takes the call as still owed. Returns the error to throw.
   */
  private claimRefused(claim: string, key: Record<string, unknown>, work: RecordWork, error: unknown): unknown {
    if (!(error instanceof TransactionCanceledException)) return error;
    const [reason] = error.CancellationReasons ?? [];
    if (reason?.Code !== 'ConditionalCheckFailed') return error;
    this.noteOwnCommitRefused(claim, key, work);
    // Without the own-holder rule: the ledger cannot tell its own commit from another try's claim.
    if (!this.options.guards.ownCommit && reason.Item !== undefined)
      delete reason.Item[PROVIDER_CALL_LEASE_HOLDER_ATTRIBUTE];
    if (!this.options.guards.providerCompletion && reason.Item !== undefined) {
      delete reason.Item[PROVIDER_CALL_DONE_ATTRIBUTE];
      delete reason.Item[SUPERSEDED_BY_ATTRIBUTE];
    }
    return error;
  }

  /** The work of a done-mark as the code before its own bound ran it: aborted at the record's deadline. */
  private underDeadline(work: RecordWork, invocation: Invocation): RecordWork {
    const deadline = new AbortController();
    invocation.timer(Math.max(0, work.deadline - Date.now()), () =>
      deadline.abort(new DeadlineExceeded(work.deadline)),
    );
    return { ...work, signal: deadline.signal };
  }

  /**
   * A done-mark's end: written, the provider's 2xx is on record; failed, the next copy calls again,
   * which is allowed only when it failed on its own bound (the batch had to answer) or the
   * invocation died; any other cut (the record's deadline) makes that next call a double send.
   */
  private async watchDoneMark(key: string, invocation: Invocation, work: RecordWork | undefined, done: Promise<void>) {
    try {
      await done;
      this.answered.delete(key);
    } catch (error) {
      const heard = this.answered.get(key);
      if (heard?.invocation === invocation)
        heard.excused = work?.recordingSignal?.aborted === true || invocation.crashed || invocation.timedOut;
      throw error;
    }
  }

  /**
   * A claim this very try committed, refused to its own retry (the claim it failed on carries the try's
   * lease holder): noted, so the try's outcome can be judged (checkNotOwnCommit).
   */
  private noteOwnCommitRefused(claim: string, key: Record<string, unknown>, work: RecordWork): void {
    const { Item } = this.db.execute(new GetCommand({ TableName: EFFECTS_TABLE, Key: key })) as {
      Item?: Record<string, unknown>;
    };
    if (Item?.[PROVIDER_CALL_LEASE_HOLDER_ATTRIBUTE] === work.leaseHolder)
      this.ownCommitsRefused.set(work.leaseHolder, claim);
  }

  /**
   * A ledger that reports its own try's commit a duplicate miscounts (EffectApplied and
   * DuplicateSuppressed are what the operators and the proof read): a try whose own claim was refused to
   * it must end `applied`.
   */
  private checkNotOwnCommit(work: RecordWork, outcome: string): void {
    const claim = this.ownCommitsRefused.get(work.leaseHolder);
    if (claim === undefined) return;
    this.ownCommitsRefused.delete(work.leaseHolder);
    if (outcome !== 'applied')
      this.miscounts.push(`${claim} reported ${outcome} for its own commit (${work.leaseHolder})`);
  }

  private sqsEvent(queue: SimQueue, messages: SimMessage[]): SQSEvent {
    return {
      Records: messages.map((m) => ({
        messageId: m.messageId,
        receiptHandle: m.handle!,
        body: m.body,
        attributes: {
          ApproximateReceiveCount: String(m.receiveCount),
          SentTimestamp: String(m.sentAt),
          SenderId: 'simulation',
          ApproximateFirstReceiveTimestamp: String(m.firstReceivedAt),
          ...(m.groupId === undefined ? {} : { MessageGroupId: m.groupId, MessageDeduplicationId: m.dedupId }),
        },
        messageAttributes: {},
        md5OfBody: '',
        eventSource: 'aws:sqs',
        eventSourceARN: `arn:aws:sqs:us-east-1:000000000000:${queue.options.name}`,
        awsRegion: 'us-east-1',
      })),
    };
  }

  // ---- external providers -------------------------------------------------

  /**
   * A provider as the consumer's code sees it: the call reaches the provider
   * after the network's latency, the provider acts and answers after its own
   * (in flight meanwhile), and the record's deadline aborts the wait for the
   * answer (what was sent may still arrive).
   */
  private provider(invocation: Invocation, name: string, consumer: string, release: Release) {
    return {
      send: async (handedKey: string, payload: Record<string, unknown>, options?: { signal?: AbortSignal }) => {
        const { event } = applying.getStore() ?? {};
        // Without the tenant in the key: the key a consumer built before it (`<consumer>:<eventId>`).
        const keyed = this.options.guards.tenantInProviderKey ? release : { ...release, providerKeyShape: 1 as const };
        const idempotencyKey = keyAsSent(keyed, consumer, event, handedKey);
        this.checkNotSentAgain(idempotencyKey, invocation);
        await invocation.io(
          `${name}.send ${idempotencyKey}`,
          () => this.providers.call(name, idempotencyKey, payload),
          { signal: options?.signal, answerAfterMs: (inFlightMs) => inFlightMs },
        );
        // A 2xx this invocation heard: it must record it (the done-mark) before anyone calls again.
        this.answered.set(idempotencyKey, { invocation, excused: false });
      },
    };
  }

  /**
   * A call under a key whose last 2xx a live invocation heard and did not record, its done-mark cut
   * by something other than its own bound: a second send a keyless provider (SMTP) would act on,
   * with no crash to explain it.
   */
  private checkNotSentAgain(idempotencyKey: string, caller: Invocation): void {
    const heard = this.answered.get(idempotencyKey);
    if (heard === undefined || heard.invocation === caller) return;
    const { invocation, excused } = heard;
    if (excused || invocation.crashed || invocation.timedOut) return;
    this.doubleSends.push(`${idempotencyKey}: sent again by ${caller.name} after ${invocation.name} heard its 2xx`);
    this.answered.delete(idempotencyKey);
  }

  // ---- the end ------------------------------------------------------------

  private checkDrained(deadline: number): void {
    const queues = [...this.consumers.values()].map((c) => c.queue);
    const quiet =
      this.activeClients === 0 &&
      this.pendingOutbox === 0 &&
      queues.every((queue) => queue.messages.size === 0) &&
      this.stream.backlog().every((left) => left === 0);
    const idle = quiet && this.redrivesLeft === 0;
    if (idle || this.scheduler.now >= deadline) {
      this.stopped = true;
      this.stream.stop();
      this.scheduler.trace(
        idle
          ? 'drained'
          : `deadline reached before the system drained: ${this.activeClients} clients busy, ${this.pendingOutbox} outbox items pending, ` +
              `${queues.map((queue) => queue.messages.size).join(' + ')} messages queued, ` +
              `${this.stream.backlog().join('+')} stream records left`,
      );
      return;
    }
    // Quiet until the operator's redrive: look again just after it rather than every 5 s for an hour.
    const next = quiet ? Math.max(5_000, this.redriveAt - this.scheduler.now + 1_000) : 5_000;
    this.scheduler.at(next, () => this.checkDrained(deadline));
  }

  /**
   * A forged copy that reached a consumer and the real event share an id: one of the two was applied,
   * and the other must sit in the consumer's DLQ as EventIdReused, for a person. Neither there: one
   * was acknowledged as a duplicate of the other, and a real event may be gone without a trace.
   */
  private lostToForgery(): string[] {
    const caught = new Set<string>();
    for (const { spec, deadLetterQueue } of this.consumers.values())
      for (const message of deadLetterQueue.all())
        if (message.attributes.failureCause === 'EventIdReused') caught.add(`${spec.name}\n${eventIdOf(message.body)}`);
    return [...this.forged]
      .filter((pair) => !caught.has(pair))
      .map((pair) => {
        const [consumer, eventId] = pair.split('\n');
        return `${consumer}: ${eventId} and a forged copy under its id: one was taken for a duplicate of the other`;
      });
  }

  private result(): SimulationResult {
    const toMessage = (m: SimMessage) => ({
      MessageId: m.messageId,
      Body: m.body,
      MessageAttributes: Object.fromEntries(
        Object.entries(m.attributes).map(([k, v]) => [k, { DataType: 'String', StringValue: v }]),
      ),
    });
    const effectItems: Record<string, unknown>[] = [...this.db.storedItems(EFFECTS_TABLE)];
    // The inbox as the consumers wrote it: an entry DynamoDB's TTL deleted (weeks after its event, in
    // long runs) was still written, and judged as it was when deleted, unless it was written anew since.
    const live = new Set(effectItems.map((i) => String(i.pk)));
    for (const [pk, item] of this.ttlDeleted) if (!live.has(pk) && pk.startsWith('INBOX#')) effectItems.push(item);
    const inbox = new Set(effectItems.map((i) => String(i.pk)));
    const pastHorizon: { queue: string; message: SimMessage; key: string }[] = [];
    const deadLetterQueues = [...this.consumers.values()].map(({ spec, deadLetterQueue }) => {
      const name = `${spec.name} DLQ`;
      const messages = deadLetterQueue.all().filter((message) => {
        const { eventId, tenant } = pastHorizonEvent(message) ?? {};
        if (eventId === undefined || !inbox.has(inboxKey(spec.name, eventId, tenant).pk)) return true;
        pastHorizon.push({ queue: name, message, key: providerKey(spec.name, { eventId, tenant }) });
        return false;
      });
      return { name, messages: messages.map(toMessage) };
    });
    const consumers = [...this.consumers.values()].map(({ spec }) => spec);
    const checked = checkInvariants({
      runId: '',
      // Judged by this world's consumer list, by the domain's own proof where it gives one.
      consumers,
      domain: this.domain.proof?.(consumers),
      checkIntents: true,
      plan: this.plan,
      observations: this.observations,
      entityIdOf: (caller, key) => this.clients.entityIdOf(caller, key),
      isPoison: isPoison,
      pendingOutbox: this.pendingOutbox,
      entities: this.domain.entities(this.db),
      effectItems,
      providerItems: this.providers.items(),
      deadLetterQueues: [
        ...deadLetterQueues,
        { name: 'relay on-failure queue', messages: this.relayFailures.all().map(toMessage) },
      ],
    });
    const verification: SimulationVerification = checked;
    // An event refused past the dedupe horizon whose effect was applied (its claim was written) sits
    // in its DLQ with its cause: invariant 5's "or sits in a DLQ with its cause", left for a person
    // (the effect to check by hand, its provider call to make if it is still owed). Judged here, since
    // only poison is expected in a DLQ otherwise; its owed provider call is that person's, not missing.
    const waiting = new Set(pastHorizon.map((p) => `no provider call under key ${p.key}`));
    verification.violations = verification.violations.filter(
      (v) => !(v.invariant === 'provider' && waiting.has(v.detail)),
    );
    for (const queue of new Set(pastHorizon.map((p) => p.queue)))
      verification.deadLetters.push({
        queue,
        cause: 'DedupeHorizonPassed (applied before the horizon: for a person)',
        count: pastHorizon.filter((p) => p.queue === queue).length,
        expected: true,
      });
    // Retention: a message gone unprocessed, from a source queue or from a DLQ before anyone redrove it.
    const lost = [
      ...[...this.consumers.values()].flatMap((c) => [...c.queue.expired, ...c.deadLetterQueue.expired]),
      ...this.relayFailures.expired,
    ];
    for (const m of lost)
      verification.violations.push({ invariant: 'dlq', detail: `message ${m.messageId} expired unprocessed` });
    for (const detail of this.lostToForgery()) verification.violations.push({ invariant: 'event-lost', detail });
    // An eventId no producer wrote (the `dlqForgeries` fault's new ids), claimed: an effect nobody produced.
    for (const item of effectItems)
      if (String(item.pk).endsWith(FORGED_EVENT_ID_SUFFIX) && item.claimedAt !== undefined)
        verification.violations.push({
          invariant: 'unproduced-effect',
          detail: `${String(item.pk)}: applied, but no producer wrote this event (forged into a DLQ and redriven)`,
        });
    for (const detail of this.doubleSends) verification.violations.push({ invariant: 'double-send', detail });
    for (const detail of this.miscounts) verification.violations.push({ invariant: 'miscount', detail });
    const providerOverlaps = this.providers.overlaps();
    for (const o of providerOverlaps)
      verification.violations.push({
        invariant: 'provider-overlap',
        detail: `key ${o.idempotencyKey}: ${o.maxInFlight} calls in flight at once (${o.pairs} overlapping pairs)`,
      });
    return {
      seed: this.options.seed,
      verification,
      traceHash: this.scheduler.traceHash(),
      trace: this.scheduler.traceTail(),
      faults: { ...this.scheduler.faults },
      consequences: { ...this.scheduler.consequences },
      events: this.scheduler.eventsRun,
      virtualSeconds: this.scheduler.now / 1000,
      requests: this.plan.length,
      unexpectedErrors: this.unexpectedErrors,
      providerOverlaps,
    };
  }
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

/** The stream event the relay's event source mapping delivers: INSERTs, new images, in shard order. */
function streamEvent(batch: StreamRecord[]): DynamoDBStreamEvent {
  return {
    Records: batch.map((r) => ({
      eventID: r.sequenceNumber,
      eventName: 'INSERT',
      eventSource: 'aws:dynamodb',
      awsRegion: 'us-east-1',
      dynamodb: { SequenceNumber: r.sequenceNumber, NewImage: r.image, StreamViewType: 'NEW_IMAGE' },
    })),
  };
}

function isPoison(body: string): boolean {
  return body.startsWith('{"poison":true');
}

function hashOf(text: string): number {
  let hash = 0;
  for (let i = 0; i < text.length; i++) hash = (hash * 31 + text.charCodeAt(i)) >>> 0;
  return hash;
}

/**
 * The current publisher's two queues, taken from the routes. It sends every
 * event to one FIFO queue and OrderPlaced to one standard queue; once the relay
 * routes by ENV.consumerRoutes (this.routes), this goes.
 */
/** How the poison fault names the queues it went to. */
function everyQueue(count: number): string {
  return count === 1 ? 'the queue' : count === 2 ? 'both queues' : `all ${count} queues`;
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

/** Guard names for `--guard name=value`: switches (true|false) and choices (one of the values). */
export interface GuardNames {
  readonly switches: readonly string[];
  readonly choices: Readonly<Record<string, readonly string[]>>;
}

const MECHANISM_GUARD_NAMES: GuardNames = {
  switches: [
    'inboxClaim',
    'providerCompletion',
    'recordDeadline',
    'dedupeHorizon',
    'providerCallLease',
    'fingerprint',
    'queueSenders',
    'futureStamps',
    'requestToken',
    'ownCommit',
    'sentFingerprint',
    'doneMarkBound',
    'legacyKeyLookup',
    'rollbackSafeUpgrade',
    'dlqSenderPolicy',
    'tenantInProviderKey',
  ],
  choices: {
    dedupeOn: ['eventId', 'messageId'],
    callerScope: ['principal', 'session'],
    retryBudget: ['budget', 'seconds'],
    apiIdempotency: ['powertools', 'no-payload-validation', 'bypassed'],
  },
};

/** `--guard name=value` on the mechanism's guards and the domain's; an unknown name or value names every known setting. */
export function withGuard(
  guards: Readonly<Record<string, unknown>>,
  name: string,
  raw: string,
  domainGuards: GuardNames = { switches: [], choices: {} },
): Record<string, unknown> {
  const switches = [...MECHANISM_GUARD_NAMES.switches, ...domainGuards.switches];
  const choices = { ...MECHANISM_GUARD_NAMES.choices, ...domainGuards.choices };
  const next = { ...guards };
  if (switches.includes(name) && (raw === 'true' || raw === 'false')) next[name] = raw === 'true';
  else if (choices[name]?.includes(raw)) next[name] = raw;
  else
    throw new Error(
      `unknown guard setting ${name}=${raw}; known: ${switches.join(', ')} (true|false), ` +
        Object.entries(choices)
          .map(([guard, values]) => `${guard} (${values.join('|')})`)
          .join(', '),
    );
  return next;
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
