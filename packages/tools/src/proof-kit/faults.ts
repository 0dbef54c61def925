import { PutParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FaultPlan } from '@exactly-once/runtime/faults/plan';
import { DEFAULT_PROVIDER_TIMEOUT_MS } from '@exactly-once/runtime/aws/http-provider';
import type { ProviderChaosPlan } from '../local-runtime/provider';
import { seeded } from '@exactly-once/runtime/runtime/random';
import { setLocalProviderChaos } from './provider-calls';
import { setLocalVisibility } from './kit-injections';
import type { Target } from './target';

export {
  forgedCreates,
  outboxEventKeys,
  poisonBody,
  redriveDeadLetters,
  seedDeadLetters,
  sendForgedFirst,
  sendPoison,
  sendReusedIds,
  setLocalVisibility,
} from './kit-injections';

/**
 * The fault switch per run: locally a file every function re-reads, on AWS the
 * stack's SSM parameter. Faults inside the functions come from the plan; the
 * kit itself adds poison messages and a DLQ redrive step.
 */
export type FaultName =
  | 'crash'
  | 'slow'
  | 'transient'
  | 'poison'
  | 'relay-crash'
  | 'resend'
  | 'clock-skew'
  | 'redrive'
  | 'provider-outage'
  | ProviderChaosFault
  | AdversarialFault;
/**
 * Faults that are attacks or producer bugs, not infrastructure failures: never in `all`, asked for by
 * name. Each leaves findings for a person in the verdict, never a pass:
 * - `reused-id`: after the load, copies of this run's applied events with other content under the
 *   same eventId (a producer reusing an id, or a forger) go to the consumers' queues. Each must end
 *   in a DLQ as EventIdReused;
 * - `forged-first`: before the load, for some of its creates (the last: forgedCreates), a copy of the event the create will
 *   produce, with other content, goes to the consumers first (a forger who got past the queues'
 *   sender policy). The forged copy is applied in the real one's place (not guaranteed: only the
 *   policy prevents it); the real one must end in a DLQ as EventIdReused, and the verdict reports
 *   the claim that holds another event's content (`event-replaced`);
 * - `clock-skew-beyond`: the relay stamps some events {@link CLOCK_SKEW_BEYOND_SECONDS} ahead, past
 *   the consumers' margin: each must be refused (OccurredInFuture), never applied.
 */
export type AdversarialFault = 'reused-id' | 'forged-first' | 'clock-skew-beyond';
export const ADVERSARIAL_FAULTS: readonly AdversarialFault[] = ['reused-id', 'forged-first', 'clock-skew-beyond'];

/** `clock-skew`: the relay stamps some events this far ahead, inside the consumers' 300 s margin: nothing may change. */
export const CLOCK_SKEW_WITHIN_SECONDS = 240;
/** `clock-skew-beyond`: a day ahead, far past the margin. */
export const CLOCK_SKEW_BEYOND_SECONDS = 86_400;
/** The faults the local provider serves on the wire: a target needs one (`npm start` starts it). */
export type ProviderChaosFault = 'answer-lost' | 'slow-answer' | 'rate-limited' | 'server-errors' | 'keys-forgotten';
export const PROVIDER_CHAOS_FAULTS: readonly ProviderChaosFault[] = [
  'answer-lost',
  'slow-answer',
  'rate-limited',
  'server-errors',
  'keys-forgotten',
];
export const ALL_FAULTS: FaultName[] = [
  'crash',
  'slow',
  'transient',
  'poison',
  'relay-crash',
  'resend',
  'clock-skew',
  'redrive',
  'provider-outage',
  ...PROVIDER_CHAOS_FAULTS,
];

/**
 * The per-fault rates `--faults all` runs with, over `--fault-rate`. The relay crash is rolled once per
 * relay invocation that dispatched something new, and a smoke run's events reach the relay in a few
 * invocations (2 in ours): at 0.1 it would fire in about one run in five. At 1 every such invocation crashes
 * once, after sending and before the stream checkpoint, and its retry, with nothing new to dispatch, goes
 * through. Named alone, each fault runs at `--fault-rate`.
 */
export const ALL_FAULTS_RATES: Readonly<Partial<Record<FaultName, number>>> = { 'relay-crash': 1 };

/**
 * How late the `slow-answer` fault answers: past the HTTP provider's own cap on one call, so the
 * caller gives up while the provider still runs the key (its retry meets 409, then the stored answer).
 */
export const SLOW_ANSWER_MS = DEFAULT_PROVIDER_TIMEOUT_MS + 1_000;
/** Requests in a row one `server-errors` burst answers 503. */
export const SERVER_ERROR_BURST_REQUESTS = 3;

export interface FaultSettings {
  enabled: FaultName[];
  /** Probability per message/record for the in-function faults. */
  rate: number;
  /** Per-fault probabilities that override `rate` for those faults (the relay crash at 1 beside others at 0.3). */
  rates?: Partial<Record<FaultName, number>>;
  /** How long the slow handler sleeps (longer than the queue's visibility timeout in the fault runs). */
  slowSeconds: number;
  /** Poison messages sent to each source queue. */
  poisonPerQueue: number;
  /** TEST ONLY: consumers whose inbox claim is switched off (proves the verification can fail). */
  disableInboxClaim?: string[];
  /**
   * Local target only: the source queues' visibility timeout during the run, in
   * seconds (0 = as deployed). Shorter than deployed on purpose: a crashed batch
   * comes back in seconds instead of minutes, and the slow fault can outlive it.
   */
  localVisibilitySeconds?: number;
  /**
   * Local target only: the longest backoff a consumer sets after a failed try while the run's faults
   * are on, in seconds (0 = as deployed: 2 s doubling to 5 minutes). A message the faults fail five
   * times in a row backs off a minute as deployed, and the drain waits for it; capped, the same tries
   * come sooner. Not applied to a run with `consumerOutageSeconds`: that run proves the deployed budget
   * outlasts an outage.
   */
  localBackoffCapSeconds?: number;
  /** How long the providers are down in one window of the `provider-outage` fault (default 10 s). */
  providerOutageSeconds?: number;
  /**
   * Every consumer try fails (transiently) for this many seconds after the plan
   * is switched on and read, then the outage ends: the retry budget must
   * outlast it, with nothing dead-lettered. Off when unset or 0.
   */
  consumerOutageSeconds?: number;
}

/**
 * The outage window the functions keep when no local provider serves it (a deployed stack): it opens a
 * seeded 0-5 s after every function has re-read the plan (so it falls inside the load) and lasts
 * `providerOutageSeconds`. Wall-clock instants, so every process sees the same window.
 */
export function providerOutageWindow(
  settings: FaultSettings,
  seed: number | undefined,
  now: Date,
): { from: string; until: string } {
  const offsetMs = Math.floor((seed === undefined ? Math.random() : seeded(seed)()) * 5_000);
  const from = now.getTime() + FAULT_SWITCH_DELAY_MS + offsetMs;
  const until = from + (settings.providerOutageSeconds ?? 10) * 1000;
  return { from: new Date(from).toISOString(), until: new Date(until).toISOString() };
}

/**
 * The plan inside the functions. `outageAtTheProvider`: the local provider serves the outage window
 * on the wire (503 with Retry-After, {@link providerChaosOf}), so the functions keep only the share of
 * calls that fail before they are sent; without one (AWS) the functions fail the window's calls too.
 */
export function faultPlanOf(
  settings: FaultSettings,
  seed?: number,
  now = new Date(),
  options: { outageAtTheProvider?: boolean } = {},
): FaultPlan {
  const on = (name: FaultName) => settings.enabled.includes(name);
  const rateOf = (name: FaultName) => (on(name) ? (settings.rates?.[name] ?? settings.rate) : undefined);
  return {
    providerOutage: rateOf('provider-outage'),
    providerOutageWindow:
      on('provider-outage') && options.outageAtTheProvider !== true
        ? providerOutageWindow(settings, seed, now)
        : undefined,
    seed,
    crashAfterEffect: rateOf('crash'),
    slowHandler: rateOf('slow'),
    slowHandlerSeconds: on('slow') ? settings.slowSeconds : undefined,
    transientError: rateOf('transient'),
    relayCrashAfterPublish: rateOf('relay-crash'),
    producerResend: rateOf('resend'),
    // Beyond the margin wins when both are on: its events are the ones a person must see.
    clockSkew: rateOf('clock-skew-beyond') ?? rateOf('clock-skew'),
    clockSkewSeconds: on('clock-skew-beyond')
      ? CLOCK_SKEW_BEYOND_SECONDS
      : on('clock-skew')
        ? CLOCK_SKEW_WITHIN_SECONDS
        : undefined,
    disableInboxClaim: settings.disableInboxClaim,
    ...consumerOutageOf(settings, now),
  };
}

/**
 * The local provider's chaos for a run, from the same settings and seed as the functions' plan:
 * `answer-lost` (performed, then the connection closed unanswered), `slow-answer` ({@link SLOW_ANSWER_MS}
 * late), `rate-limited` (429, Retry-After 1), `server-errors` (bursts of {@link SERVER_ERROR_BURST_REQUESTS}
 * 503s), each at its rate, and `provider-outage`'s window as 503s with Retry-After, `providerOutageSeconds`
 * long from the first provider call of the run: timed by the clock from the load's start, it could close on a
 * cold runtime before any call came, and the run would prove nothing about it. `keys-forgotten` is not
 * in the plan: the kit makes the provider forget its keys before the redrive ({@link forgetsKeys}).
 * Empty when none of these faults is on.
 */
export function providerChaosOf(settings: FaultSettings, seed?: number): ProviderChaosPlan {
  const on = (name: FaultName) => settings.enabled.includes(name);
  const rateOf = (name: FaultName) => settings.rates?.[name] ?? settings.rate;
  const plan: ProviderChaosPlan = {};
  // Each fires on the first request it can, then at its rate: a run that enables a fault always sees it.
  if (on('answer-lost')) plan.dropAnswer = { count: 1, probability: rateOf('answer-lost') };
  if (on('slow-answer')) plan.slowAnswer = { count: 1, probability: rateOf('slow-answer'), delayMs: SLOW_ANSWER_MS };
  if (on('rate-limited')) plan.rateLimit = { count: 1, probability: rateOf('rate-limited'), retryAfterSeconds: 1 };
  // A burst is several 503s (the first starts with the next request): started at a third of the rate,
  // about as many requests fail as the rate says.
  if (on('server-errors'))
    plan.serverErrorBurst = {
      requests: SERVER_ERROR_BURST_REQUESTS,
      probability: rateOf('server-errors') / SERVER_ERROR_BURST_REQUESTS,
      retryAfterSeconds: 1,
    };
  if (on('provider-outage'))
    plan.outage = { forMs: (settings.providerOutageSeconds ?? 10) * 1000, mode: 'unavailable' };
  return Object.keys(plan).length === 0 ? plan : { ...(seed === undefined ? {} : { seed }), ...plan };
}

/** Whether the run makes the local provider forget its keys before the redrive (`keys-forgotten`). */
export const forgetsKeys = (settings: FaultSettings): boolean => settings.enabled.includes('keys-forgotten');

/** The outage ends `consumerOutageSeconds` after every function has re-read the plan. */
/** The plan's backoff cap: on the local target only, and never where the run proves the deployed budget. */
export function localBackoffCapOf(
  settings: FaultSettings,
  target: Pick<Target, 'kind'>,
): Pick<FaultPlan, 'backoffCapSeconds'> {
  const cap = settings.localBackoffCapSeconds ?? 0;
  if (target.kind !== 'local' || cap <= 0 || (settings.consumerOutageSeconds ?? 0) > 0) return {};
  return { backoffCapSeconds: cap };
}

function consumerOutageOf(settings: FaultSettings, now: Date): Pick<FaultPlan, 'consumerOutageUntil'> {
  const seconds = settings.consumerOutageSeconds ?? 0;
  if (seconds <= 0) return {};
  return { consumerOutageUntil: new Date(now.getTime() + FAULT_SWITCH_DELAY_MS + seconds * 1000).toISOString() };
}

/** A plan set without an expiry (tests, by hand) turns itself off after this long. */
export const DEFAULT_PLAN_LIFETIME_MS = 15 * 60 * 1000;

/**
 * Writes the plan to the target's switch. A plan always carries an expiry
 * (functions ignore one without): `DEFAULT_PLAN_LIFETIME_MS` unless it has its own.
 * No faults on a target without a switch is a no-op; faults there are refused.
 */
export async function setFaultPlan(target: Target, plan: FaultPlan): Promise<void> {
  const empty = Object.values(plan).every((v) => v === undefined);
  if (target.faultSwitch === undefined) {
    if (empty) return;
    throw new Error(noFaultSwitch(target));
  }
  const expiring = empty
    ? {}
    : { ...plan, expiresAt: plan.expiresAt ?? new Date(Date.now() + DEFAULT_PLAN_LIFETIME_MS).toISOString() };
  const json = JSON.stringify(expiring);
  if ('file' in target.faultSwitch) {
    fs.mkdirSync(path.dirname(target.faultSwitch.file), { recursive: true });
    fs.writeFileSync(target.faultSwitch.file, json);
  } else {
    const ssm = new SSMClient({});
    await ssm.send(
      new PutParameterCommand({ Name: target.faultSwitch.parameterName, Value: json, Overwrite: true, Type: 'String' }),
    );
    ssm.destroy();
  }
}

/** How long functions may keep using an old plan (their cache period), plus a margin. */
export const FAULT_SWITCH_DELAY_MS = 6_000;

/**
 * How long a run's plan lives: the load (at a pessimistic 20 requests a second),
 * both drains (before and after the redrive) and a 5-minute margin. The kit
 * switches the plan off when the run ends; the expiry only stops a plan whose
 * kit died. A run that outlasts it finishes without faults, and still verifies.
 */
export function faultPlanLifetimeMs(profile: { drainTimeoutMs: number }, requests: number): number {
  return Math.ceil(requests / 20) * 1000 + 2 * profile.drainTimeoutMs + 5 * 60 * 1000;
}

/** Whether the run needs the functions' fault switch (poison, redrive, reused-id and forged-first are sent by the kit itself). */
export function needsFaultSwitch(settings: FaultSettings): boolean {
  const byTheKit: readonly FaultName[] = ['poison', 'redrive', 'reused-id', 'forged-first', ...PROVIDER_CHAOS_FAULTS];
  return (
    settings.enabled.some((f) => !byTheKit.includes(f)) ||
    (settings.disableInboxClaim?.length ?? 0) > 0 ||
    (settings.consumerOutageSeconds ?? 0) > 0
  );
}

function noFaultSwitch(target: Target): string {
  return `Stack ${target.name} has no fault switch (no FaultParameterName output): in-function faults need a stack deployed with -c faultInjection=true (never prod); run without them, or with only poison,redrive,reused-id,forged-first`;
}

/**
 * Switches a run's faults on: the in-function plan (then waits until every
 * function has re-read it) and, locally, the shortened visibility. `off()` puts
 * both back and is safe to call more than once (after the drain, in a finally,
 * on Ctrl-C).
 */
export async function switchFaultsOn(
  target: Target,
  settings: FaultSettings,
  seed: number,
  log: (line: string) => void,
  lifetimeMs: number = DEFAULT_PLAN_LIFETIME_MS,
): Promise<{ inFunction: boolean; off(): Promise<void> }> {
  const inFunction = needsFaultSwitch(settings);
  const localProvider = target.outputs.LocalProviderUrl !== undefined;
  // Refused before anything changes: the run would report faults that never happened.
  if (inFunction && target.faultSwitch === undefined) throw new Error(noFaultSwitch(target));
  const onTheWire = settings.enabled.filter((f) => (PROVIDER_CHAOS_FAULTS as readonly string[]).includes(f));
  if (onTheWire.length > 0 && !localProvider)
    throw new Error(
      `Stack ${target.name} has no local provider: ${onTheWire.join(', ')} are served by the local provider (npm start), which the kit cannot put in front of a real one`,
    );
  const now = new Date();
  const chaos = localProvider ? providerChaosOf(settings, seed) : {};
  const chaosOn = Object.keys(chaos).length > 0;
  const visibility = settings.localVisibilitySeconds ?? 0;
  const restoreVisibility =
    inFunction && target.kind === 'local' && visibility > 0
      ? await setLocalVisibility(target, visibility)
      : async () => undefined;
  let on = true;
  const off = async () => {
    if (!on) return;
    on = false;
    await setFaultPlan(target, {});
    if (chaosOn) await setLocalProviderChaos(target.outputs, {});
    await restoreVisibility();
  };
  // A kit that dies mid-run leaves a plan that stops by itself: after the run, its drains and a margin.
  const plan = {
    ...faultPlanOf(settings, seed, now, { outageAtTheProvider: chaos.outage !== undefined }),
    ...localBackoffCapOf(settings, target),
    expiresAt: new Date(now.getTime() + lifetimeMs).toISOString(),
  };
  await setFaultPlan(target, inFunction ? plan : {});
  if (chaosOn) {
    await setLocalProviderChaos(target.outputs, chaos);
    log(`Local provider chaos switched on: ${JSON.stringify(chaos)}`);
  }
  if (inFunction) {
    log(`Fault plan switched on: ${JSON.stringify(plan)}`);
    await new Promise((r) => setTimeout(r, FAULT_SWITCH_DELAY_MS)); // every function has re-read the switch
  }
  return { inFunction, off };
}
