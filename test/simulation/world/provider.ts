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

/**
 * External providers (warehouse, mail) as they behave in real life: they
 * dedupe on the idempotency key for a limited time (Stripe keeps keys 24 h),
 * fail some calls, and are down during outage windows.
 */
export class SimProviders {
  readonly log = new Map<string, ProviderEntry>();
  /** Each provider is down from start (inclusive) to end (exclusive), in virtual ms. */
  readonly outages: { provider: string; start: number; end: number }[] = [];

  constructor(
    private readonly scheduler: Scheduler,
    private readonly options: { memorySeconds: number; failureChance: number },
  ) {}

  /** One call as the provider sees it: refused (down, failing), or recorded, as an effect unless it remembers the key. */
  call(name: string, idempotencyKey: string, payload: Record<string, unknown>): void {
    const now = this.scheduler.now;
    if (this.outages.some((o) => o.provider === name && now >= o.start && now < o.end))
      throw new ServiceUnavailable(name);
    if (this.scheduler.chance(this.options.failureChance)) {
      this.scheduler.fault('provider-failure', `${name} ${idempotencyKey}`);
      throw new ServiceUnavailable(name);
    }
    const calledAt = this.scheduler.date().toISOString();
    const entry = this.log.get(idempotencyKey) ?? {
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
  }

  items(): Record<string, unknown>[] {
    return [...this.log.values()].map((entry) => ({ ...entry }));
  }
}
