import { PermanentError } from '@exactly-once/runtime/errors';
import { canonicalJson } from '@exactly-once/runtime/runtime/canonical-json';
import { ServiceUnavailable } from './invocation';
import type { Scheduler } from './scheduler';

/** A provider log entry, in the proof kit's provider log shape (adapters/recording-provider.ts) plus effects. */
export interface ProviderEntry {
  idempotencyKey: string;
  provider: string;
  payload: Record<string, unknown>;
  calls: number;
  /** Calls the provider acted on: the first, and any after it forgot the key. */
  effects: number;
  firstCalledAt: string;
  lastCalledAt: string;
  lastSeenAt: number;
}

/** Calls under one idempotency key that were in flight at the provider at the same time. */
export interface ProviderOverlap {
  idempotencyKey: string;
  /** The most calls under the key in flight at once. */
  maxInFlight: number;
  /** Pairs of its calls that overlapped (each call counts the ones in flight when it arrived). */
  pairs: number;
}

/** How long an accepted call is in flight at the provider by default: it acts on arrival, answers after this (ms). */
const DEFAULT_ANSWER_MS: [number, number] = [10, 300];

/**
 * External providers (warehouse, mail) as they behave in real life: they
 * dedupe on the idempotency key for a limited time (Stripe keeps keys 24 h),
 * fail some calls, and are down during outage windows. An accepted call acts
 * when it arrives and is answered a moment later (`answerMs`): meanwhile it is
 * in flight, and the provider counts the calls in flight under each key at
 * once. Two at once is what the provider-call lease exists to prevent (a
 * provider without a key, SMTP or SES, would send twice): `overlaps()`.
 */
export class SimProviders {
  readonly log = new Map<string, ProviderEntry>();
  /** Each provider is down from start (inclusive) to end (exclusive), in virtual ms. */
  readonly outages: { provider: string; start: number; end: number }[] = [];
  private readonly inFlight = new Map<string, number>();
  private readonly overlapping = new Map<string, ProviderOverlap>();

  constructor(
    private readonly scheduler: Scheduler,
    private readonly options: { memorySeconds: number; failureChance: number; answerMs?: [number, number] },
  ) {}

  /**
   * One call as the provider sees it: refused (down, failing), or recorded, as
   * an effect unless it remembers the key. Returns how long the accepted call
   * stays in flight before it is answered (ms).
   */
  call(name: string, idempotencyKey: string, payload: Record<string, unknown>): number {
    const now = this.scheduler.now;
    if (this.outages.some((o) => o.provider === name && now >= o.start && now < o.end))
      throw new ServiceUnavailable(name);
    if (this.scheduler.chance(this.options.failureChance)) {
      this.scheduler.fault('provider-failure', `${name} ${idempotencyKey}`);
      throw new ServiceUnavailable(name);
    }
    const calledAt = this.scheduler.date().toISOString();
    const known = this.log.get(idempotencyKey);
    // Stripe's rule, as the local provider and HttpProvider have it: a key it still remembers, sent with
    // another payload, is refused (422, ProviderRejected), never performed nor answered with the first reply.
    if (
      known !== undefined &&
      now - known.lastSeenAt < this.options.memorySeconds * 1000 &&
      canonicalJson(known.payload) !== canonicalJson(payload)
    )
      throw new PermanentError(
        'ProviderRejected',
        `${name} refused ${idempotencyKey} with 422: the key was used with another payload`,
      );
    const entry = known ?? {
      idempotencyKey,
      provider: name,
      payload,
      calls: 0,
      effects: 0,
      firstCalledAt: calledAt,
      lastCalledAt: '',
      lastSeenAt: -Infinity,
    };
    entry.calls += 1;
    entry.lastCalledAt = calledAt;
    if (now - entry.lastSeenAt >= this.options.memorySeconds * 1000) entry.effects += 1;
    entry.lastSeenAt = now;
    this.log.set(idempotencyKey, entry);
    return this.keepInFlight(idempotencyKey);
  }

  /** Every key that had calls in flight at once, in the order it first happened. */
  overlaps(): ProviderOverlap[] {
    return [...this.overlapping.values()].map((o) => ({ ...o }));
  }

  private keepInFlight(idempotencyKey: string): number {
    const [min, max] = this.options.answerMs ?? DEFAULT_ANSWER_MS;
    const answerMs = this.scheduler.between(min, max);
    const already = this.inFlight.get(idempotencyKey) ?? 0;
    this.inFlight.set(idempotencyKey, already + 1);
    if (already > 0) {
      const overlap = this.overlapping.get(idempotencyKey) ?? { idempotencyKey, maxInFlight: 0, pairs: 0 };
      overlap.maxInFlight = Math.max(overlap.maxInFlight, already + 1);
      overlap.pairs += already;
      this.overlapping.set(idempotencyKey, overlap);
      this.scheduler.trace(`provider: ${already + 1} calls under ${idempotencyKey} in flight at once`);
    }
    this.scheduler.at(answerMs, () => {
      const left = (this.inFlight.get(idempotencyKey) ?? 1) - 1;
      if (left === 0) this.inFlight.delete(idempotencyKey);
      else this.inFlight.set(idempotencyKey, left);
    });
    return answerMs;
  }

  items(): Record<string, unknown>[] {
    return [...this.log.values()].map((entry) => ({ ...entry }));
  }
}
