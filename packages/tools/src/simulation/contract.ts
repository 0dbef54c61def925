import type { Violation } from '../proof-kit/domain';
import type { Verification } from '../proof-kit/verification';
import type { ProviderOverlap } from './world/provider';

/**
 * What `npm run sim` (cli.ts, campaign.ts) needs of a simulated world. The world is the example's:
 * its API clients, its tables, its use cases, wired to the simulation's parts (world/: the scheduler,
 * the in-memory DynamoDB, SQS and stream, invocations, providers) and judged by the proof kit's
 * invariants. The example hands it over lazily (`simulation` in its tooling module), so a tool that
 * does not simulate never loads it.
 */
export interface SimulationWorld {
  /** Runs one schedule. */
  simulate(options: SimulationOptionsBase): Promise<SimulationResult>;
  /** The world's defaults with these overrides. */
  options(overrides: Partial<SimulationOptionsBase> & { seed: number }): SimulationOptionsBase;
  /** When the operator redrives the DLQs by default, in seconds after the last intent arrived. */
  readonly defaultRedriveAfterSeconds: number;
  /** The guards with `name` set from the command line (`--guard name=value`); throws naming the known settings. */
  withGuard(guards: Readonly<Record<string, unknown>>, name: string, raw: string): Record<string, unknown>;
  /** The ids in a violation's text that pick its trace lines (the shop: order ids, message ids, keys). */
  idsIn(text: string): string[];
}

/** The options every world takes; a world adds its own (its request mix, its faults' and guards' fields). */
export interface SimulationOptionsBase {
  seed: number;
  /** How many intents (the shop: orders to place) the schedule sends. */
  intents: number;
  /** Fault kind to rate (or a world's own shape, such as a [min, max] range), as `--fault kind=JSON` sets it. */
  faults: Readonly<Record<string, unknown>>;
  /** Each guard can be switched off (test-only) to prove that the simulation notices. */
  guards: Readonly<Record<string, unknown>>;
  /** Operator action: redrive every consumer's DLQ this long after the last intent arrived (undefined: never). */
  redriveDlqsAfterSeconds?: number;
  /** Weeks of virtual time: the operator redrives `redrives` times, every `everyDays` days. */
  longRedrive?: { redrives: number; everyDays: number; ttlDeletionDelaySeconds?: number };
  /** The share of intents changed later (the shop: orders cancelled). */
  cancelChance?: number;
  /** Trace lines kept for the report (all lines are hashed). */
  keepTrace?: number;
}

/**
 * The proof kit's verdict (`checkInvariants`) plus what only the simulation can
 * see: `provider-overlap`, two calls under one idempotency key in flight at the
 * provider at once (the provider-call lease's invariant; a provider that takes
 * no key would have acted twice).
 */
export interface SimulationVerification extends Omit<Verification, 'violations'> {
  violations: { invariant: Violation['invariant'] | 'provider-overlap'; detail: string }[];
}

export interface SimulationResult {
  seed: number;
  verification: SimulationVerification;
  traceHash: string;
  trace: string[];
  faults: Record<string, number>;
  /** What the simulated services did in answer to faults (stream bisects, records given up on), by kind. */
  consequences: Record<string, number>;
  events: number;
  virtualSeconds: number;
  requests: number;
  unexpectedErrors: string[];
  /** Keys with calls in flight at the provider at the same time (each one a `provider-overlap` violation). */
  providerOverlaps: ProviderOverlap[];
}
