import { waitForDrain, pendingOutboxCount } from './drain';
import { drive } from './drive';
import { retryUnconfirmedCreates } from './client-retries';
import {
  ADVERSARIAL_FAULTS,
  ALL_FAULTS,
  ALL_FAULTS_RATES,
  redriveDeadLetters,
  seedDeadLetters,
  sendPoison,
  sendForgedFirst,
  sendReusedIds,
  faultPlanLifetimeMs,
  forgetsKeys,
  switchFaultsOn,
  type FaultName,
  type FaultSettings,
} from './faults';
import { proofDomainOf } from '../domain-parts';
import { isSentPoison } from '../dlq/causes';
import { DEFAULT_MIX, type Mix, type PlannedRequest } from './plan';
import { seededRandom } from './random';
import { summarize, type CallCounts, type FaultEvidence, type RunResults } from './report';
import { acceptedIntents, startSampler, subtract, type Sampler } from './sampler';
import { deployedCaller, type Target } from './target';
import { verify } from './verify';
import type { EntityItem, ProofDomain } from './domain';
import { factsOfLedger, type IntentRecord } from './intents';
import { STACK_OUTPUTS } from '@exactly-once/runtime/stack-outputs';
import { forgetLocalProviderKeys, localProviderCounters } from './provider-calls';
import { localSpans, slowestOrderTrace } from './trace';
import { gitCommit, reproduceCommand, type Provenance } from './provenance';

/**
 * One proof run: plan, switch faults on, drive the API, switch faults off,
 * drain, redrive, drain, verify. Returns the results; the CLI prints and writes them.
 */
export interface Profile {
  /** New intents to send (`PlanOptions.intents`). */
  intents: number;
  connections: number;
  rate?: number;
  /** `PlanOptions.parties` and `resources`: how wide the plan spreads its intents, and how hot it makes them. */
  parties: number;
  resources: number;
  drainTimeoutMs: number;
}

/**
 * - smoke: a minute without faults, for a first look and CI (with every fault, a few: retries back off);
 * - default: the proof run;
 * - hot-sku: the default load on one resource (the shop: one SKU per line position,
 *   at most 3 SKUs in all), so intents in one FIFO batch contend for the same
 *   items: transaction conflicts, retried in-process with jitter;
 * - soak: long and wide.
 */
export const PROFILES: Record<'smoke' | 'default' | 'hot-sku' | 'soak', Profile> = {
  smoke: { intents: 20, connections: 4, parties: 5, resources: 5, drainTimeoutMs: 180_000 },
  default: { intents: 300, connections: 16, parties: 40, resources: 25, drainTimeoutMs: 240_000 },
  'hot-sku': { intents: 300, connections: 16, parties: 40, resources: 1, drainTimeoutMs: 240_000 },
  soak: { intents: 20_000, connections: 32, rate: 100, parties: 500, resources: 200, drainTimeoutMs: 900_000 },
};

export interface RunOptions {
  target: Target;
  profileName: string;
  profile: Profile;
  mix?: Mix;
  seed: number;
  faults: FaultSettings;
  /** Local only: reads the runtime's call counters (undefined on AWS: not measured). */
  callCounters?: () => Promise<Omit<CallCounts, 'apiRequests'>>;
  log?: (line: string) => void;
  /** The command line's arguments, for the report's command that reproduces the run (default: none given). */
  args?: readonly string[];
}

/**
 * Marks "faults off" on the run's charts, only when the run had switched something on: a run with no
 * faults draws no such marker (the report marks only what happened).
 */
export function markFaultsOff(sampler: Pick<Sampler, 'mark'>, settings: FaultSettings): void {
  if (settings.enabled.length > 0 || (settings.disableInboxClaim?.length ?? 0) > 0) sampler.mark('faults off');
}

/** The request rate and the faults' rates in words, for the provenance. */
export function ratesInWords(settings: FaultSettings, profile: Profile): string {
  const load = profile.rate === undefined ? 'requests as fast as the connections go' : `${profile.rate} requests/s`;
  if (settings.enabled.length === 0) return `${load}; no faults`;
  const overrides = Object.entries(settings.rates ?? {})
    .filter(([fault, rate]) => rate !== settings.rate && settings.enabled.includes(fault as FaultName))
    .map(([fault, rate]) => `${fault} ${rate}`);
  return `${load}; fault rate ${settings.rate}${overrides.length === 0 ? '' : ` (${overrides.join(', ')})`}`;
}

/** How many times the run's recovery redrives what reached a DLQ, letting the queues settle in between. */
const RECOVERY_ROUNDS = 3;

export async function runLoadTest(options: RunOptions): Promise<RunResults> {
  const log = options.log ?? (() => undefined);
  const { target, profile } = options;
  const runId = `lt${Date.now().toString(36)}${Math.floor(options.seed % 1000)}`;
  const startedAtMs = Date.now();
  const startedAt = new Date(startedAtMs).toISOString();
  const provenance = provenanceOf(options);
  // What the drain still waits for, every 10 s: a drain under faults can take minutes.
  const drainOptions = { timeoutMs: profile.drainTimeoutMs, onProgress: log };
  const random = seededRandom(options.seed);
  const isPoison = (body: string) => isSentPoison(body, runId);

  const domain = proofDomainOf(target.domain);
  const plan = domain.buildPlan(random, {
    intents: profile.intents,
    mix: options.mix ?? DEFAULT_MIX,
    callers: target.callers.map((c) => c.arn),
    parties: profile.parties,
    resources: profile.resources,
    runId,
    entityIdOf: domain.entityIdOf,
  });
  log(`Plan: ${plan.length} requests for ${profile.intents} ${domain.entityNoun} (run ${runId}, seed ${options.seed})`);

  // Faults off and visibility restored whatever happens: an interrupted run must not leave them on.
  const faults = await switchFaultsOn(
    target,
    options.faults,
    options.seed,
    log,
    faultPlanLifetimeMs(profile, plan.length),
  );
  const interrupted = () => void faults.off().finally(() => process.exit(130));
  process.once('SIGINT', interrupted);
  try {
    const before = await options.callCounters?.();
    const spansSince = Date.now();
    const chaosBefore = (await localProviderCounters(target.outputs))?.chaos;
    // The pipeline over time, for the report (local: consumer counters from the runtime's stats route).
    const sampler = await startSampler(target, {
      statsUrl: target.kind === 'local' ? new URL('/__local/stats', target.apiUrl).toString() : undefined,
    });
    const { driven, poisonMessages } = await injectAndDrive(options, runId, plan, domain, log);
    log(
      `Load done in ${(driven.durationMs / 1000).toFixed(1)} s; draining${faults.inFunction ? ' with the faults still on' : ''}`,
    );

    // Faults stay on until the pipeline has drained: most deliveries happen after the HTTP load ends.
    sampler.mark('load done');
    const loadDrain = await waitForDrain(target, drainOptions);
    if (!loadDrain.drained)
      log(`Not drained after ${(loadDrain.waitedMs / 1000).toFixed(0)} s with the faults on; switching them off`);
    await faults.off();
    markFaultsOff(sampler, options.faults);
    const { redriven, providerKeysForgotten, drain } = await recoverAndSettle(
      { target, options, runId, startedAtMs, isPoison, log, drainOptions, sampler },
      loadDrain.waitedMs,
    );
    const after = await options.callCounters?.();
    const chaosAfter = (await localProviderCounters(target.outputs))?.chaos;
    const pipeline = await sampler.stop(acceptedIntents(plan, driven.observations, domain));
    const spans = await localSpans(target, spansSince);

    const verification = await verify({
      target,
      runId,
      plan,
      observations: driven.observations,
      entityIdOf: domain.entityIdOf,
      isPoison,
      pendingOutbox: await pendingOutboxCount(target),
      metrics: before?.metrics && after?.metrics ? subtract(after.metrics, before.metrics) : undefined,
    });
    return summarize({
      runId,
      target: `${target.kind}:${target.name}`,
      seed: options.seed,
      profile: options.profileName,
      faults: faultsInResults(options.faults),
      startedAt,
      plan,
      observations: driven.observations,
      durationMs: driven.durationMs,
      injected: { poisonMessages, redriven, providerKeysForgotten },
      drain,
      verification,
      calls: callsOver(plan.length, before, after),
      evidence: diffEvidence(before?.functions, after?.functions),
      providerChaos: chaosBefore && chaosAfter ? subtract(chaosAfter, chaosBefore) : undefined,
      pipeline,
      trace: spans === undefined ? undefined : { recorded: spans.length, slowest: slowestOrderTrace(spans) },
      provenance,
    });
  } finally {
    process.removeListener('SIGINT', interrupted);
    await faults.off();
  }
}

/**
 * The load: the faults the kit sends ahead of it (forged-first) and beside it (poison), and the planned
 * requests driven at the API. Returns what the API answered and how much poison went out.
 */
async function injectAndDrive(
  options: RunOptions,
  runId: string,
  plan: PlannedRequest[],
  domain: ProofDomain,
  log: (line: string) => void,
): Promise<{ driven: Awaited<ReturnType<typeof drive>>; poisonMessages: number }> {
  const { target, profile } = options;
  const enabled = options.faults.enabled;
  if (enabled.includes('forged-first')) {
    const forged = await sendForgedFirst(target, plan, Math.max(1, Math.ceil(profile.intents / 20)), domain);
    log(`Sent ${forged} forged copy(ies) of events this run's creates will produce, ahead of them (forged-first)`);
  }
  const poison = enabled.includes('poison')
    ? sendPoison(target, runId, options.faults.poisonPerQueue)
    : Promise.resolve(0);
  const driveOptions = {
    apiUrl: target.apiUrl,
    region: target.region,
    callers: target.callers,
    connections: profile.connections,
    rate: profile.rate,
  };
  const driven = await drive(plan, { ...driveOptions, onProgress: (done, total) => log(`  sent ${done}/${total}`) });
  // As the API asks of a client: a create with no definite answer is sent again under its key.
  const retried = await retryUnconfirmedCreates(plan, driven.observations, (requests) => drive(requests, driveOptions));
  if (retried.resent > 0)
    log(
      `Resent ${retried.resent} create(s) that got no definite answer (no response, 409, 502, 503, 504) under their Idempotency-Key, as a client does; ${retried.unconfirmed} still unconfirmed`,
    );
  const poisonMessages = await poison;
  return { driven: { ...driven, observations: retried.observations }, poisonMessages };
}

/** The run's faults as the results name them, the consumers whose inbox claim was switched off included. */
function faultsInResults(settings: FaultSettings): string[] {
  return [
    ...settings.enabled,
    ...(settings.disableInboxClaim?.length ? [`inbox-claim-disabled(${settings.disableInboxClaim.join(',')})`] : []),
  ];
}

/** What the phases after the load share. */
interface RunContext {
  target: Target;
  options: RunOptions;
  runId: string;
  startedAtMs: number;
  isPoison: (body: string) => boolean;
  log: (line: string) => void;
  drainOptions: { timeoutMs: number; onProgress: (line: string) => void };
  sampler: Sampler;
}

/**
 * After the load drained and the faults went off: the operator's recovery (redrive, settle), with the
 * faults the kit injects at that point (keys forgotten, reused ids, seeded DLQ copies) before its last round.
 */
async function recoverAndSettle(
  run: RunContext,
  loadDrainMs: number,
): Promise<{ redriven: number; providerKeysForgotten: number; drain: RunResults['drain'] }> {
  const { target, runId, startedAtMs, isPoison, log, drainOptions, sampler } = run;
  const enabled = run.options.faults.enabled;
  // The operator's recovery, done every run: whatever is in a DLQ and is not poison (retries exhausted
  // under transient faults or crashes, or the seeded copies) goes back to its source. Poison stays.
  // A message still backing off when the faults went off can exhaust its receives after the first
  // redrive, so the operator looks again once the queues settle (a few rounds at most).
  let redriven = 0;
  // The run drained if the last settle did: an earlier timeout (the load's drain with the faults still on,
  // or an earlier settle) is made good by a later one, and the invariants are checked on the settled state.
  // The bound on the drain under faults is the run's time budget, not a property: a message can back off
  // for minutes while faults keep failing it. The wait is all of them.
  let settled = true;
  let waitedMs = loadDrainMs;
  const recover = async () => {
    for (let round = 0; round < RECOVERY_ROUNDS; round++) {
      const moved = await redriveDeadLetters(target, isPoison, (body) => body.includes(`${runId}-`));
      if (moved > 0) log(`Redrove ${moved} message(s) from the DLQs back to their sources`);
      if (moved > 0) sampler.mark('redrive');
      redriven += moved;
      if (round > 0 && moved === 0) break;
      // Faults off: whatever is left (backoffs, redriven messages) settles.
      const settle = await waitForDrain(target, drainOptions);
      settled = settle.drained;
      waitedMs += settle.waitedMs;
    }
  };
  // The provider's key window passes at once, once every call has been answered and recorded (the
  // pipeline settled): from then on only the consumers' own records stand between a redriven event and
  // a second effect, as for a redrive days after the provider forgot the key. Forgetting earlier would
  // let the retry of a lost answer perform again: the residue of a key window shorter than the retries.
  let providerKeysForgotten = 0;
  if (forgetsKeys(run.options.faults)) {
    await recover();
    if (settled) {
      // This run's keys only: an earlier run's on the same runtime are neither forgotten nor counted.
      providerKeysForgotten = await forgetLocalProviderKeys(target.outputs, startedAtMs);
      log(`The local provider forgot ${providerKeysForgotten} idempotency key(s) of this run before the redrive`);
    } else log('Not settled: the local provider keeps its keys (a retry still running would perform again)');
  }
  if (enabled.includes('reused-id')) {
    const reused = await sendReusedIds(target, runId, Math.max(1, Math.ceil(run.options.profile.intents / 20)));
    log(`Sent ${reused} copy(ies) of applied events with other content under their eventId (reused-id)`);
  }
  if (enabled.includes('redrive')) {
    const seeded = await seedDeadLetters(target, runId, Math.max(2, Math.ceil(run.options.profile.intents / 10)));
    log(`Seeded ${seeded} already-delivered event(s) into the DLQs`);
  }
  await recover();
  return { redriven, providerKeysForgotten, drain: { drained: settled, waitedMs } };
}

/** The provenance of a run about to start: the code, the target, the load and the command that repeats it. */
function provenanceOf(options: RunOptions): Provenance {
  const { target, profile } = options;
  return {
    commit: gitCommit(),
    stack: target.kind === 'local' ? 'local' : target.name,
    region: target.region,
    node: process.version,
    load: `${profile.intents} intents on ${profile.connections} connections, drain bound ${Math.round(profile.drainTimeoutMs / 1000)} s`,
    rates: ratesInWords(options.faults, profile),
    command: reproduceCommand(options.args ?? [], options.seed),
  };
}

/** The calls over the run: the API's from the plan, the rest from the local runtime's counters where measured. */
function callsOver(
  requests: number,
  before: Omit<CallCounts, 'apiRequests'> | undefined,
  after: Omit<CallCounts, 'apiRequests'> | undefined,
): CallCounts {
  const calls: CallCounts = { apiRequests: requests };
  if (before !== undefined && after !== undefined) {
    const diff = (key: 'dynamodbWrites' | 'dynamodbReads' | 'sqs' | 'lambdaInvocations') =>
      after[key] === undefined || before[key] === undefined ? undefined : after[key]! - before[key]!;
    calls.dynamodbWrites = diff('dynamodbWrites');
    calls.dynamodbReads = diff('dynamodbReads');
    calls.sqs = diff('sqs');
    calls.lambdaInvocations = diff('lambdaInvocations');
  }
  return calls;
}

export function parseFaults(value: string | undefined): FaultName[] {
  if (value === undefined || value === '' || value === 'none') return [];
  if (value === 'all') return [...ALL_FAULTS];
  const names = value.split(',').map((s) => s.trim()) as FaultName[];
  const known: readonly FaultName[] = [...ALL_FAULTS, ...ADVERSARIAL_FAULTS];
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length > 0)
    throw new Error(`Unknown fault(s) ${unknown.join(', ')}; known: ${known.join(', ')}, all, none`);
  return names;
}

/**
 * The per-fault rates a `--faults` value asks for: {@link ALL_FAULTS_RATES} for `all`; none for a list,
 * whose faults each run at `--fault-rate`.
 */
export function parseFaultRates(value: string | undefined): FaultSettings['rates'] {
  return value === 'all' ? { ...ALL_FAULTS_RATES } : undefined;
}

/** The fault evidence counters over the run (after minus before), per function; undefined where not measured. */
function diffEvidence(before: FaultEvidence | undefined, after: FaultEvidence | undefined): FaultEvidence | undefined {
  if (before === undefined || after === undefined) return undefined;
  return Object.fromEntries(
    Object.entries(after).map(([name, counts]) => {
      const earlier = before[name];
      return [
        name,
        {
          crashes: counts.crashes - (earlier?.crashes ?? 0),
          redeliveredWhileRunning: counts.redeliveredWhileRunning - (earlier?.redeliveredWhileRunning ?? 0),
          eventsResent: counts.eventsResent - (earlier?.eventsResent ?? 0),
          eventsStampedAhead: counts.eventsStampedAhead - (earlier?.eventsStampedAhead ?? 0),
        },
      ];
    }),
  );
}

/**
 * Verify-only: after a load from elsewhere (Artillery, FIS experiments, real
 * traffic on a test stack), checks the invariants. With the generators' intent
 * ledgers (`intents`, merged from every worker's), the entities judged are
 * those the ledgers' keys name: one per accepted key, none for a refused one,
 * and their effects, provider keys, DLQs and outbox. Without them, every
 * entity in the stack is judged on its effects, and the headline check (one
 * per accepted key) cannot run: `intentsChecked` says so.
 */
export async function verifyStack(
  target: Target,
  options: { drainTimeoutMs: number; intents?: readonly IntentRecord[] },
): Promise<{
  verification: Awaited<ReturnType<typeof verify>>;
  drained: boolean;
  waitedMs: number;
  intentsChecked: boolean;
}> {
  const drain = await waitForDrain(target, { timeoutMs: options.drainTimeoutMs, onProgress: console.log });
  const domain = proofDomainOf(target.domain);
  const intents = options.intents;
  // The ledger names callers as STS does; the API scopes keys to the principal by the stage's rule.
  const principalOf = (caller: string) => deployedCaller(caller, target.outputs[STACK_OUTPUTS.humanRolePatterns]);
  const facts = intents === undefined ? { plan: [], observations: [] } : factsOfLedger(intents, principalOf);
  const judged =
    intents === undefined ? undefined : new Set(facts.plan.map((p) => domain.entityIdOf(p.caller, p.idempotencyKey!)));
  const verification = await verify({
    target,
    runId: '',
    checkIntents: intents !== undefined,
    ...facts,
    ...(judged === undefined ? {} : { isJudged: (item: EntityItem) => judged.has(domain.idOf(item)) }),
    entityIdOf: domain.entityIdOf,
    isPoison: (body) => isSentPoison(body),
    pendingOutbox: await pendingOutboxCount(target),
  });
  return { verification, drained: drain.drained, waitedMs: drain.waitedMs, intentsChecked: intents !== undefined };
}
