import { RETRY_BUDGET, type RetryBudget } from '@exactly-once/runtime/consumer/retry-budget';
import type { SimulationOptionsBase } from '../contract';
import type { ApiIdempotency } from './api';

/**
 * The engine's options: the fault rates a schedule draws on, the mechanism's guards (each can be
 * switched off, test-only, to show what breaks), the deployed stack's settings, and their defaults.
 */
export type FaultRates = {
  /** Per outside call of any invocation: the process dies at that await point. */
  crashPerCall: number;
  /**
   * Per outside call of the relay, the sweeper, a consumer or the domain's create command: the call hangs
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
   * after their entity was changed (the shop: its order cancelled).
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
   * relay publishes it, a copy with other content (its entity's fields changed) to every consumer
   * queue that takes it, under a deduplication id of its own. The queues' sender policy denies the
   * send unless the `queueSenders` guard is off.
   */
  forgedFirst?: number;
  /**
   * Adversarial (0 by default). Per client: the API instance that produces its entity's events has
   * its clock this many seconds off, drawn from `producerClockSkewSeconds` (the events' occurredAt
   * and the entity's timestamps carry it). Within the consumers' margin (300 s) it must change
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
  /**
   * A sequenced consumer's claim (ConsumerSpec.ledger `sequenced`) is conditioned on its entity item's
   * sequence. Off: guards/sequence-condition.ts drops the condition, and duplicates and stale versions apply.
   */
  sequenceCondition: boolean;
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
  /** How many intents the domain's clients start (the shop: orders to place). */
  intents: number;
  arrivalsPerSecond: number;
  faults: FaultRates;
  guards: MechanismGuards;
  settings: Settings;
  /** Operator action: redrive every consumer's DLQ to its queue this long after the last intent arrived (undefined: never). */
  redriveDlqsAfterSeconds?: number;
  /**
   * Weeks of virtual time instead: the operator redrives every consumer's DLQ
   * `redrives` times, every `everyDays` days after the last intent arrived (in
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
 * The operator redrives the consumers' DLQs an hour after the last intent arrived: after
 * every outage window has closed and every message it dead-lettered got there,
 * and after the later changes of those intents (the shop: cancels) were applied.
 */
export const DEFAULT_REDRIVE_AFTER_SECONDS = 3600;

export const MECHANISM_GUARDS: MechanismGuards = {
  callerScope: 'principal',
  apiIdempotency: 'powertools',
  inboxClaim: true,
  sequenceCondition: true,
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
  intents: 200,
  arrivalsPerSecond: 20,
  cancelChance: 0.2,
  faults: DEFAULT_FAULTS,
  guards: MECHANISM_GUARDS,
  settings: DEFAULT_SETTINGS,
  redriveDlqsAfterSeconds: DEFAULT_REDRIVE_AFTER_SECONDS,
} satisfies Partial<SimulationOptions>;
