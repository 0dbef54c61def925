/**
 * The provider's idempotency-key memory, Stripe's semantics: a key is taken by
 * its first request (state `running`) and, once that request has answered,
 * holds the answer (`done`) for replays. A key is scoped to one endpoint and is
 * forgotten `windowMs` after its first request; a running key is never forgotten.
 */
export interface StoredResponse {
  status: number;
  body: unknown;
}

/** What the store says about a request's key: take it (perform), or answer without performing. */
export type KeyClaim =
  /** The key was free (never seen, or forgotten): it is now taken; perform, then `complete`. */
  | { kind: 'new'; forgotten?: 'expired' | 'early' }
  /** The key's first request is still running: 409. */
  | { kind: 'in-progress' }
  /** The key was used with another payload: 422. */
  | { kind: 'mismatch' }
  /** The same key and payload answered before: send the stored answer again. */
  | { kind: 'replay'; response: StoredResponse };

interface KeyEntry {
  fingerprint: string;
  createdAt: number;
  response?: StoredResponse;
}

/** Expired entries are swept after this many claims, so a long run does not grow without bound. */
const SWEEP_EVERY = 1024;

export class KeyStore {
  private readonly entries = new Map<string, KeyEntry>();
  private claims = 0;
  /** Keys forgotten by the window (on reuse or by the sweep) and forgotten early (the fault, or `forget`). */
  readonly stats = { expired: 0, forgottenEarly: 0 };

  /**
   * @param windowMs how long a key is remembered after its first request.
   * @param now the clock (epoch milliseconds).
   */
  constructor(
    private readonly windowMs: number,
    private readonly now: () => number,
  ) {}

  /**
   * Looks `key` up on `scope` (the endpoint) and takes it when free.
   * `fingerprint` is the payload's canonical JSON. `earlyMs`, when set, forgets
   * answered keys older than that (the "keys forgotten early" fault).
   */
  claim(scope: string, key: string, fingerprint: string, earlyMs?: number): KeyClaim {
    if (++this.claims % SWEEP_EVERY === 0) this.sweep();
    const id = entryId(scope, key);
    const entry = this.entries.get(id);
    let forgotten: 'expired' | 'early' | undefined;
    if (entry !== undefined && entry.response !== undefined) {
      const age = this.now() - entry.createdAt;
      if (age >= this.windowMs) forgotten = 'expired';
      else if (earlyMs !== undefined && age >= earlyMs) forgotten = 'early';
    }
    if (entry !== undefined && forgotten === undefined) {
      if (entry.response === undefined) return { kind: 'in-progress' };
      if (entry.fingerprint !== fingerprint) return { kind: 'mismatch' };
      return { kind: 'replay', response: entry.response };
    }
    if (forgotten === 'expired') this.stats.expired += 1;
    if (forgotten === 'early') this.stats.forgottenEarly += 1;
    this.entries.set(id, { fingerprint, createdAt: this.now() });
    return forgotten === undefined ? { kind: 'new' } : { kind: 'new', forgotten };
  }

  /** The taken key's request has answered (or its answer was dropped): later requests replay `response`. */
  complete(scope: string, key: string, response: StoredResponse): void {
    const entry = this.entries.get(entryId(scope, key));
    if (entry !== undefined) entry.response = response;
  }

  /**
   * Forgets every answered key at least `olderThanMs` old (0: all of them), and only those first taken
   * at or after `takenSince` when given (one run's keys, not the earlier runs' on the same provider);
   * running keys stay taken. Returns how many were forgotten.
   */
  forget(olderThanMs = 0, takenSince?: number): number {
    const now = this.now();
    let forgotten = 0;
    for (const [id, entry] of this.entries) {
      const inScope = takenSince === undefined || entry.createdAt >= takenSince;
      if (entry.response !== undefined && inScope && now - entry.createdAt >= olderThanMs) {
        this.entries.delete(id);
        forgotten += 1;
      }
    }
    this.stats.forgottenEarly += forgotten;
    return forgotten;
  }

  /** Keys currently remembered (running or answered). */
  get size(): number {
    return this.entries.size;
  }

  private sweep(): void {
    const now = this.now();
    for (const [id, entry] of this.entries)
      if (entry.response !== undefined && now - entry.createdAt >= this.windowMs) {
        this.entries.delete(id);
        this.stats.expired += 1;
      }
  }
}

function entryId(scope: string, key: string): string {
  return `${scope}\u0000${key}`;
}
