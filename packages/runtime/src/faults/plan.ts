import { seeded } from '../runtime/random';
import { parseInboxBypass } from './inbox-bypass';

/**
 * Fault injection plan for the proof kit. Off unless a plan is switched on for
 * a run; every field is a probability in [0, 1] unless named otherwise. The
 * faults are the ways at-least-once delivery bites in real life, injected on
 * purpose so the kit can show effects still equal intents. Only bundles built
 * with fault injection contain this (see bundleDefines, packages/cdk/src/function-defaults.ts).
 */
export interface FaultPlan {
  /**
   * When the plan turns itself off (ISO-8601). Required: a plan without one, or
   * past it, or further ahead than {@link MAX_PLAN_LIFETIME_MS}, is no faults,
   * so a plan someone forgot to switch off stops by itself.
   */
  expiresAt?: string;
  /**
   * Consumers: the process dies after the effect committed, before the ack (whole batch redelivered).
   * Rolled after each try that finished the event's work: it applied the effect, or made the provider
   * call an earlier try's committed effect still owed.
   */
  crashAfterEffect?: number;
  /** Consumers: the handler first sleeps `slowHandlerSeconds` (longer than the visibility timeout, in the fault runs). */
  slowHandler?: number;
  slowHandlerSeconds?: number;
  /** Consumers: a transient error before the effect (retried with backoff). */
  transientError?: number;
  /**
   * Relay: the process dies after publishing (and marking dispatched), before the
   * stream checkpoint, so the records are relayed again. Rolled only when the
   * invocation dispatched something for the first time: the retry goes through.
   */
  relayCrashAfterPublish?: number;
  /** Relay: an event is published a second time as a new message (new message id, new FIFO dedup id). */
  producerResend?: number;
  /**
   * Relay: an event goes out stamped by a clock `clockSkewSeconds` off (its `occurredAt` moved by
   * that much), as from a producer whose clock is wrong. Within the consumers' margin (300 s ahead)
   * it must change nothing; beyond it, the event is refused (OccurredInFuture), never applied.
   */
  clockSkew?: number;
  /** How far off, in seconds (at most {@link MAX_CLOCK_SKEW_SECONDS} either way); ahead when positive. */
  clockSkewSeconds?: number;
  /**
   * Local runtime only: consumers named here skip the inbox claim, so duplicates
   * become double effects. Exists to prove the verification can fail; read only
   * by the local runtime's build (./inbox-bypass.ts), ignored everywhere else.
   */
  disableInboxClaim?: string[];
  /** Providers: a call fails before reaching the provider (a 5xx or timeout), with this probability. */
  providerOutage?: number;
  /**
   * Providers: every call fails between these instants (ISO-8601), the same
   * window in every process: the warehouse or mail service is down for a while.
   */
  providerOutageWindow?: { from: string; until: string };
  /** Providers the outage applies to (`warehouse`, `mail`); every provider when absent. */
  providerOutageProviders?: string[];
  /**
   * Consumers: until this ISO time every try throws a transient error (an outage of
   * everything behind the consumer); from then on the fault is gone. Proves a
   * dependency down for longer than a short retry budget dead-letters nothing.
   */
  consumerOutageUntil?: string;
  /**
   * Consumers, local fault runs: the longest backoff, in seconds, a consumer sets on a message after a
   * failed try while the plan is on (at most {@link MAX_BACKOFF_CAP_SECONDS_UNDER_FAULTS}). The deployed
   * backoff doubles from 2 s to 5 minutes, so a message the faults fail five times in a row waits a
   * minute, and a local run waits with it. Capped, the same tries happen in the same order, sooner.
   * Which waits the deployed budget guarantees is checked at synth (the RetryBudget rule), not here.
   */
  backoffCapSeconds?: number;
  /**
   * Seed for the fault rolls. Each process mixes it with its own salt (its pid):
   * a restarted process must not replay the roll that crashed its predecessor.
   */
  seed?: number;
  /** The rolls' source of randomness (seeded when `seed` is set); not part of the JSON. */
  random?: () => number;
}

export const NO_FAULTS: FaultPlan = Object.freeze({});

/** The largest backoff cap a plan may set: the deployed cap, so a plan can shorten a wait, never lengthen it. */
export const MAX_BACKOFF_CAP_SECONDS_UNDER_FAULTS = 300;

/** The largest clock skew a plan may ask for: 30 days. */
export const MAX_CLOCK_SKEW_SECONDS = 30 * 24 * 3600;

/** The longest a plan may run: a plan expiring later is refused (no faults), so none is set "forever". */
export const MAX_PLAN_LIFETIME_MS = 24 * 60 * 60 * 1000;

/** True with probability `rate` (undefined or 0: never), drawn from the plan's generator. */
export function roll(rate: number | undefined, plan: Pick<FaultPlan, 'random'> = NO_FAULTS): boolean {
  return rate !== undefined && rate > 0 && (plan.random ?? Math.random)() < rate;
}

export class InjectedProviderOutage extends Error {
  constructor(provider: string) {
    super(`Injected outage of provider ${provider}`);
    this.name = 'InjectedProviderOutage';
  }
}

/** True when a call to `provider` at `now` must fail: inside the outage window, or by the per-call roll. */
export function providerDown(plan: FaultPlan, provider: string, now: Date): boolean {
  if (plan.providerOutageProviders !== undefined && !plan.providerOutageProviders.includes(provider)) return false;
  const window = plan.providerOutageWindow;
  if (window !== undefined && now >= new Date(window.from) && now < new Date(window.until)) return true;
  return roll(plan.providerOutage, plan);
}

function parseOutageWindow(raw: unknown): FaultPlan['providerOutageWindow'] {
  if (raw === null || typeof raw !== 'object') return undefined;
  const { from, until } = raw as Record<string, unknown>;
  if (typeof from !== 'string' || typeof until !== 'string') return undefined;
  const start = Date.parse(from);
  const end = Date.parse(until);
  return Number.isFinite(start) && Number.isFinite(end) && start < end ? { from, until } : undefined;
}

export class InjectedTransientError extends Error {
  constructor(where: string) {
    super(`Injected transient error in ${where}`);
    this.name = 'InjectedTransientError';
  }
}

/**
 * Reads a plan from untrusted JSON: unknown fields are ignored, bad values turn
 * that fault off, and a plan that has no valid expiry, has expired, or expires
 * more than a day after `now` is no faults at all.
 */
export function parseFaultPlan(raw: unknown, salt = 0, now: number = Date.now()): FaultPlan {
  if (raw === null || typeof raw !== 'object') return NO_FAULTS;
  const source = raw as Record<string, unknown>;
  const expiresAt = typeof source.expiresAt === 'string' ? Date.parse(source.expiresAt) : NaN;
  if (!Number.isFinite(expiresAt) || expiresAt <= now || expiresAt - now > MAX_PLAN_LIFETIME_MS) return NO_FAULTS;
  const rate = (key: string) => {
    const value = source[key];
    return typeof value === 'number' && value >= 0 && value <= 1 ? value : undefined;
  };
  const seconds = source.slowHandlerSeconds;
  const skew = source.clockSkewSeconds;
  const seed = typeof source.seed === 'number' && Number.isInteger(source.seed) ? source.seed : undefined;
  const cap = source.backoffCapSeconds;
  return {
    expiresAt: source.expiresAt as string,
    seed,
    random: seed === undefined ? undefined : seeded(seed ^ salt),
    crashAfterEffect: rate('crashAfterEffect'),
    slowHandler: rate('slowHandler'),
    slowHandlerSeconds: typeof seconds === 'number' && seconds >= 0 && seconds <= 900 ? seconds : undefined,
    transientError: rate('transientError'),
    relayCrashAfterPublish: rate('relayCrashAfterPublish'),
    producerResend: rate('producerResend'),
    clockSkew: rate('clockSkew'),
    clockSkewSeconds:
      typeof skew === 'number' && Number.isInteger(skew) && Math.abs(skew) <= MAX_CLOCK_SKEW_SECONDS ? skew : undefined,
    providerOutage: rate('providerOutage'),
    providerOutageWindow: parseOutageWindow(source.providerOutageWindow),
    providerOutageProviders: Array.isArray(source.providerOutageProviders)
      ? source.providerOutageProviders.filter((p): p is string => typeof p === 'string')
      : undefined,
    ...parseConsumerOutage(source),
    backoffCapSeconds:
      typeof cap === 'number' && Number.isInteger(cap) && cap >= 1 && cap <= MAX_BACKOFF_CAP_SECONDS_UNDER_FAULTS
        ? cap
        : undefined,
    // Dead code, and so absent, in every bundle but the local runtime's (bundleDefines, packages/cdk/src/function-defaults.ts).
    ...(process.env.INBOX_BYPASS_BUILD === 'true' ? parseInboxBypass(source) : {}),
  };
}

function parseConsumerOutage(source: Record<string, unknown>): Pick<FaultPlan, 'consumerOutageUntil'> {
  const until = source.consumerOutageUntil;
  return typeof until === 'string' && !Number.isNaN(Date.parse(until)) ? { consumerOutageUntil: until } : {};
}

/** Whether the plan's consumer outage is still going on at `now`. */
export function inConsumerOutage(plan: Pick<FaultPlan, 'consumerOutageUntil'>, now: number = Date.now()): boolean {
  return plan.consumerOutageUntil !== undefined && now < Date.parse(plan.consumerOutageUntil);
}
