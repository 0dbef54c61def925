import { providerKey, type KeyShape } from '@exactly-once/runtime/inbox/keys';
import type { LedgerKeyOptions } from '@exactly-once/runtime/aws/inbox-claim-keys';
import type { EventRef } from '@exactly-once/runtime/inbox/ports';

/**
 * Which release of a consumer an invocation runs, for the `deployWindowSeconds` and `rollbackAtSeconds`
 * faults (off by default: every invocation runs this release with the ledgers' default keys).
 * - A deploy: before the window every consumer runs the previous release (shape 1: no tenant in the
 *   inbox key, provider key `<consumer>:<eventId>`); each consumer's function is replaced at a time
 *   drawn in the window (a stack update replaces functions in no set order), and an invocation that
 *   started before its consumer's switch runs to its end as the previous release.
 * - A rollback: this release until `rollbackAtSeconds`, then the release before it (shape 2: the tenant
 *   in the inbox key, the provider key without it) for the rest of the run.
 * A previous release builds its provider key itself (it knew no recorded key): `<consumer>:<eventId>`.
 */
export interface Release {
  readonly name: 'current' | 'previous';
  /** The ledgers' key options (undefined: the defaults, write 3 and find 3, 2, 1). */
  readonly keys: LedgerKeyOptions | undefined;
  /** The shape the release's own code builds provider keys in; undefined: the key the ledger hands it. */
  readonly providerKeyShape: KeyShape | undefined;
}

/** This release, with the ledgers' defaults. */
export const CURRENT_RELEASE: Release = { name: 'current', keys: undefined, providerKeyShape: undefined };

/** The guards the releases read: see MechanismGuards in world.ts. */
export interface ReleaseGuards {
  legacyKeyLookup: boolean;
  rollbackSafeUpgrade: boolean;
}

/** The faults the releases read: see FaultRates in world.ts. */
export interface ReleaseFaults {
  deployWindowSeconds?: [number, number];
  rollbackAtSeconds?: number;
}

/**
 * The releases of one simulated run: each consumer's switch time (a deploy), drawn once per consumer
 * in the list's order, and the release an invocation starting at `nowMs` runs.
 *
 * @example
 * ```ts
 * const releases = new Releases(faults, guards, ['probe', 'probe-fifo'], (min, max) => scheduler.between(min, max));
 * releases.at('probe', scheduler.now).keys; // { write: 1, find: [1] } before probe's switch
 * ```
 */
export class Releases {
  private readonly switchAtMs = new Map<string, number>();

  constructor(
    private readonly faults: ReleaseFaults,
    private readonly guards: ReleaseGuards,
    consumers: readonly string[],
    between: (minMs: number, maxMs: number) => number,
  ) {
    const window = faults.deployWindowSeconds;
    if (window !== undefined)
      for (const consumer of consumers) this.switchAtMs.set(consumer, between(window[0] * 1000, window[1] * 1000));
  }

  /** Whether a fault runs any release but this one (the traces say which an invocation runs). */
  get active(): boolean {
    return this.faults.deployWindowSeconds !== undefined || this.faults.rollbackAtSeconds !== undefined;
  }

  /** The release `consumer`'s invocation starting at `nowMs` (virtual ms) runs. */
  at(consumer: string, nowMs: number): Release {
    const switchAt = this.switchAtMs.get(consumer);
    if (switchAt !== undefined && nowMs < switchAt)
      return { name: 'previous', keys: { write: 1, find: [1] }, providerKeyShape: 1 };
    const { rollbackAtSeconds } = this.faults;
    if (rollbackAtSeconds !== undefined && nowMs >= rollbackAtSeconds * 1000)
      return { name: 'previous', keys: { write: 2, find: [2] }, providerKeyShape: 2 };
    return { name: 'current', keys: this.currentKeys(), providerKeyShape: undefined };
  }

  /**
   * This release's ledger keys. Without the legacy lookup (`legacyKeyLookup` off) it finds claims only
   * under its own shape, as a release that forgot its predecessors would. Before a rollback, the first
   * step of the two-step upgrade (`rollbackSafeUpgrade`) writes the previous release's shape.
   */
  private currentKeys(): LedgerKeyOptions | undefined {
    const find: LedgerKeyOptions['find'] = this.guards.legacyKeyLookup ? undefined : [3];
    const write: LedgerKeyOptions['write'] =
      this.faults.rollbackAtSeconds !== undefined && this.guards.rollbackSafeUpgrade ? 2 : undefined;
    if (find === undefined && write === undefined) return undefined;
    return { ...(write === undefined ? {} : { write }), ...(find === undefined ? {} : { find }) };
  }
}

/**
 * The provider key a release's code sends under: the previous releases built it from the event in
 * their own shape; this release sends under the key the ledger hands it (the one its claim recorded).
 *
 * @example
 * ```ts
 * keyAsSent(release, 'probe', event, key); // 'probe:e-1' for a previous release
 * ```
 */
export function keyAsSent(release: Release, consumer: string, event: EventRef | undefined, key: string): string {
  if (release.providerKeyShape === undefined || event === undefined) return key;
  return providerKey(consumer, event, release.providerKeyShape);
}
