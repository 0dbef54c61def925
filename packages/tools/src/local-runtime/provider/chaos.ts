import { seeded } from '@exactly-once/runtime/runtime/random';

/** A provider API the local provider serves, by its name (a consumer spec's `providers` entry). */
export type ProviderEndpoint = string;

/**
 * How often a fault fires: the next `count` eligible requests, then each later
 * one with `probability` (drawn from the plan's seeded generator). Neither: never.
 */
export interface FaultRate {
  count?: number;
  probability?: number;
}

/**
 * The provider's chaos, all optional (an empty plan is no chaos). Faults apply
 * to the endpoints named in `endpoints` (every endpoint when absent). Every
 * fault that fires is counted in {@link ChaosCounters}, so a run can assert it
 * happened. JSON-safe: the proof kit can write it to a file or `PUT /__chaos`.
 */
export interface ProviderChaosPlan {
  /** Seeds the probability rolls: the same plan and the same requests give the same faults. Unseeded: Math.random. */
  seed?: number;
  endpoints?: ProviderEndpoint[];
  /** Applied, then the answer dropped: the effect is performed and recorded, the socket destroyed without a reply. */
  dropAnswer?: FaultRate;
  /** The answer (a performed one or a replay) is sent `delayMs` late; the key stays in progress meanwhile. */
  slowAnswer?: FaultRate & { delayMs: number };
  /** 429 with `Retry-After: retryAfterSeconds` (default 1), not performed. */
  rateLimit?: FaultRate & { retryAfterSeconds?: number };
  /**
   * 503 bursts, not performed: `requests` requests in a row get 503. One burst
   * starts with the next request after the plan is set; with `probability`, each
   * later request outside a burst starts another with that probability.
   */
  serverErrorBurst?: { requests: number; probability?: number; retryAfterSeconds?: number };
  /**
   * Down for a window: every request gets 503 with `Retry-After` (mode `unavailable`, the default) or its
   * socket is destroyed unanswered (mode `refused`), not performed. The window is either fixed, between
   * `from` (inclusive) and `until` (exclusive), ISO-8601 or epoch milliseconds, or `forMs` long from the
   * first request the chaos applies to after the plan is set: a window timed by the clock alone can close
   * before the first call arrives (a cold runtime), and the outage then fires nowhere.
   */
  outage?: OutageWindow;
  /** While set, answered keys at least this old are forgotten (0: every key, the provider remembers none). */
  forgetKeysOlderThanMs?: number;
}

/** When the provider is down ({@link ProviderChaosPlan.outage}): fixed instants, or from its first request on. */
export type OutageWindow = (
  { from: string | number; until: string | number } | { forMs: number; from?: undefined; until?: undefined }
) & { mode?: 'unavailable' | 'refused' };

/** Evidence that each fault fired: one count per request it hit. */
export interface ChaosCounters {
  answersDropped: number;
  slowAnswers: number;
  rateLimited: number;
  burstsStarted: number;
  burstUnavailable: number;
  outageUnavailable: number;
  outageRefused: number;
  /** Keys forgotten before their window: by `forgetKeysOlderThanMs` on reuse, or by `forgetKeys()`. */
  keysForgottenEarly: number;
}

export function emptyChaosCounters(): ChaosCounters {
  return {
    answersDropped: 0,
    slowAnswers: 0,
    rateLimited: 0,
    burstsStarted: 0,
    burstUnavailable: 0,
    outageUnavailable: 0,
    outageRefused: 0,
    keysForgottenEarly: 0,
  };
}

/** A request refused by the chaos before it reaches the key layer. */
export type GateFault =
  | { kind: 'outage'; mode: 'unavailable' | 'refused'; retryAfterSeconds: number }
  | { kind: 'burst'; retryAfterSeconds?: number }
  | { kind: 'rate-limit'; retryAfterSeconds: number };

type CountedFault = 'dropAnswer' | 'slowAnswer' | 'rateLimit';

/** The plan in force, its remaining counts and its generator. */
export class Chaos {
  private plan: ProviderChaosPlan = {};
  private random: () => number = Math.random;
  private remaining: Record<CountedFault, number> = { dropAnswer: 0, slowAnswer: 0, rateLimit: 0 };
  private burstLeft = 0;
  /** The outage's instants: a fixed window's at once, a `forMs` one's at the first request it applies to. */
  private outageFrom?: number;
  private outageUntil?: number;

  constructor(readonly counters: ChaosCounters = emptyChaosCounters()) {}

  /** Replaces the plan: counts and the generator start again; the counters keep counting. */
  set(plan: ProviderChaosPlan): void {
    this.plan = structuredClone(plan);
    this.random = plan.seed === undefined ? Math.random : seeded(plan.seed);
    this.remaining = {
      dropAnswer: plan.dropAnswer?.count ?? 0,
      slowAnswer: plan.slowAnswer?.count ?? 0,
      rateLimit: plan.rateLimit?.count ?? 0,
    };
    const burst = plan.serverErrorBurst;
    this.burstLeft = burst?.requests ?? 0;
    const outage = plan.outage;
    this.outageFrom = outage?.from === undefined ? undefined : instant(outage.from);
    this.outageUntil = outage?.until === undefined ? undefined : instant(outage.until);
  }

  /** A copy of the plan in force. */
  current(): ProviderChaosPlan {
    return structuredClone(this.plan);
  }

  /** `forgetKeysOlderThanMs` when it applies to `endpoint`. */
  forgetOlderThanMs(endpoint: ProviderEndpoint): number | undefined {
    return this.applies(endpoint) ? this.plan.forgetKeysOlderThanMs : undefined;
  }

  /** The outage, a 503 burst or a 429 for this request (in that order), counted; undefined: let it through. */
  gate(endpoint: ProviderEndpoint, now: number): GateFault | undefined {
    if (!this.applies(endpoint)) return undefined;
    const outage = this.plan.outage;
    if (outage !== undefined) {
      if (this.outageFrom === undefined && 'forMs' in outage) {
        this.outageFrom = now;
        this.outageUntil = now + outage.forMs;
      }
      const from = this.outageFrom ?? Infinity;
      const until = this.outageUntil ?? -Infinity;
      if (now >= from && now < until) {
        const mode = outage.mode ?? 'unavailable';
        if (mode === 'refused') this.counters.outageRefused += 1;
        else this.counters.outageUnavailable += 1;
        return { kind: 'outage', mode, retryAfterSeconds: Math.max(1, Math.ceil((until - now) / 1000)) };
      }
    }
    const burst = this.plan.serverErrorBurst;
    if (burst !== undefined) {
      if (this.burstLeft === 0 && burst.probability !== undefined && this.random() < burst.probability)
        this.burstLeft = burst.requests;
      if (this.burstLeft > 0) {
        if (this.burstLeft === burst.requests) this.counters.burstsStarted += 1;
        this.burstLeft -= 1;
        this.counters.burstUnavailable += 1;
        return { kind: 'burst', retryAfterSeconds: burst.retryAfterSeconds };
      }
    }
    if (this.fires('rateLimit', this.plan.rateLimit)) {
      this.counters.rateLimited += 1;
      return { kind: 'rate-limit', retryAfterSeconds: this.plan.rateLimit?.retryAfterSeconds ?? 1 };
    }
    return undefined;
  }

  /** After a performed effect: drop its answer? Counted when it fires. */
  dropsAnswer(endpoint: ProviderEndpoint): boolean {
    if (!this.applies(endpoint) || !this.fires('dropAnswer', this.plan.dropAnswer)) return false;
    this.counters.answersDropped += 1;
    return true;
  }

  /** How late this answer goes out (0: on time). Counted when it fires. */
  answerDelayMs(endpoint: ProviderEndpoint): number {
    const slow = this.plan.slowAnswer;
    if (slow === undefined || !this.applies(endpoint) || !this.fires('slowAnswer', slow)) return 0;
    this.counters.slowAnswers += 1;
    return slow.delayMs;
  }

  private applies(endpoint: ProviderEndpoint): boolean {
    return this.plan.endpoints === undefined || this.plan.endpoints.includes(endpoint);
  }

  private fires(name: CountedFault, rate: FaultRate | undefined): boolean {
    if (rate === undefined) return false;
    if (this.remaining[name] > 0) {
      this.remaining[name] -= 1;
      return true;
    }
    return rate.probability !== undefined && rate.probability > 0 && this.random() < rate.probability;
  }
}

function instant(value: string | number): number {
  return typeof value === 'number' ? value : Date.parse(value);
}

/**
 * Reads a chaos plan from untrusted JSON (a file, `PUT /__chaos`): unknown
 * fields are ignored and a malformed fault is left out (off), never guessed.
 */
export function parseChaosPlan(raw: unknown): ProviderChaosPlan {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return {};
  const source = raw as Record<string, unknown>;
  const plan: ProviderChaosPlan = {};
  if (Number.isInteger(source.seed)) plan.seed = source.seed as number;
  if (Array.isArray(source.endpoints))
    plan.endpoints = source.endpoints.filter((e): e is ProviderEndpoint => typeof e === 'string');
  const dropAnswer = faultRate(source.dropAnswer);
  if (dropAnswer !== undefined) plan.dropAnswer = dropAnswer;
  const slow = faultRate(source.slowAnswer);
  const delayMs = field(source.slowAnswer, 'delayMs');
  if (slow !== undefined && isCount(delayMs)) plan.slowAnswer = { ...slow, delayMs };
  const rateLimit = faultRate(source.rateLimit);
  if (rateLimit !== undefined) {
    const retryAfter = field(source.rateLimit, 'retryAfterSeconds');
    plan.rateLimit = isCount(retryAfter) ? { ...rateLimit, retryAfterSeconds: retryAfter } : rateLimit;
  }
  const requests = field(source.serverErrorBurst, 'requests');
  if (isCount(requests) && requests > 0) {
    const probability = field(source.serverErrorBurst, 'probability');
    const retryAfter = field(source.serverErrorBurst, 'retryAfterSeconds');
    plan.serverErrorBurst = {
      requests,
      ...(isProbability(probability) ? { probability } : {}),
      ...(isCount(retryAfter) ? { retryAfterSeconds: retryAfter } : {}),
    };
  }
  const from = field(source.outage, 'from');
  const until = field(source.outage, 'until');
  const forMs = field(source.outage, 'forMs');
  const mode = field(source.outage, 'mode');
  const outageMode: Pick<OutageWindow, 'mode'> = mode === 'refused' || mode === 'unavailable' ? { mode } : {};
  if (isInstant(from) && isInstant(until) && instant(from) < instant(until))
    plan.outage = { from, until, ...outageMode };
  else if (from === undefined && until === undefined && isCount(forMs) && forMs > 0)
    plan.outage = { forMs, ...outageMode };
  if (isCount(source.forgetKeysOlderThanMs)) plan.forgetKeysOlderThanMs = source.forgetKeysOlderThanMs;
  return plan;
}

function field(value: unknown, name: string): unknown {
  return value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[name] : undefined;
}

function faultRate(value: unknown): FaultRate | undefined {
  const count = field(value, 'count');
  const probability = field(value, 'probability');
  const rate: FaultRate = {
    ...(isCount(count) ? { count } : {}),
    ...(isProbability(probability) ? { probability } : {}),
  };
  return rate.count === undefined && rate.probability === undefined ? undefined : rate;
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

function isProbability(value: unknown): value is number {
  return typeof value === 'number' && value >= 0 && value <= 1;
}

function isInstant(value: unknown): value is string | number {
  return (
    (typeof value === 'number' && Number.isFinite(value)) ||
    (typeof value === 'string' && !Number.isNaN(Date.parse(value)))
  );
}
