import type { ConsumerSpec } from '../lambdas/exactly-once/consumer-spec';
import { tooling } from '../lambdas/example';
import type { LocalProviderApi } from './local-runtime/provider/apis';
import type { ProofDomain } from './proof-kit/domain';
import type { SimulationWorld } from './simulation/contract';

/**
 * What a tool may know of the example's domain, given by the example (`lambdas/example.ts`, one
 * module the example owns): a tool reads the domain from {@link EXAMPLE} and from nothing else of
 * the example. Every tool (the DLQ tool, the stack helpers, the scaffolder, the local runtime and its
 * provider, the proof kit, the simulation, the bench) takes everything it knows from here; a lint
 * rule holds tools/ to it.
 */
export interface ExampleTooling {
  /** The consumers, as the stack deploys them: their queues, DLQs and outputs are found by their names. */
  readonly consumers: readonly ConsumerSpec[];
  /** The stack output naming the table that holds the outbox (and its pending index): drains and redrives read it. */
  readonly outboxTableOutput: string;
  /**
   * What the proof kit (`npm run loadtest`) knows of the domain: its request plan, entities, events and
   * invariants (tools/proof-kit/domain.ts). Without it the kit refuses to run, saying so.
   */
  readonly proof?: ProofDomain;
  /**
   * The simulated world `npm run sim` runs (tools/simulation/contract.ts), loaded on demand. Without it
   * the simulation refuses to run, saying so.
   */
  readonly simulation?: () => Promise<SimulationWorld>;
  /**
   * The example's benchmark, which `npm run bench` runs (tools/bench/cli.ts) with the command line's
   * arguments, loaded on demand; it returns the exit status. Without it the bench refuses to run.
   */
  readonly bench?: () => Promise<{ run(args: string[]): Promise<number> }>;
  /**
   * Whether a message body is one of the example's events as its consumers read them: anything
   * else a consumer refuses as SchemaViolation (poison), whatever the DLQ message's attributes say.
   */
  isEvent(body: string): boolean;
  /**
   * Where `npm run new:consumer` writes a consumer: `folder` (under lambdas/, holding `consumers.ts`
   * with the marker line and `consumerSpec`, and `entry-points/`, `use-cases/`, `aws/`), and the event
   * types the producers write (a FIFO consumer takes them all, a standard one the first).
   */
  readonly scaffold: { readonly folder: string; readonly eventTypes: readonly string[] };
  /**
   * How the local provider (`npm start`) serves the providers the consumers name, by provider name,
   * where a real API of that kind answers or refuses differently from the default (201, any payload).
   * A provider named by a consumer and not described here is served with the defaults.
   */
  readonly localProviders?: Readonly<Record<string, LocalProviderApi>>;
  /** Requests `npm start` suggests trying, as arguments of `tools/local-runtime/call.ts` (method, path, body, flags). */
  readonly tryIt?: readonly string[];
}

/** The example's tooling, checked against the contract here, where the tools read it. */
export const EXAMPLE: ExampleTooling = tooling;

/** The example's proof domain; a clear error when it gives none (the kit cannot judge a run without one). */
export function proofDomain(): ProofDomain {
  if (EXAMPLE.proof === undefined)
    throw new Error(
      "The example's tooling module gives no proof domain (`proof`, tools/proof-kit/domain.ts): the proof kit has no plan to send and no invariants to judge.",
    );
  return EXAMPLE.proof;
}

/** The example's simulated world; a clear error when it gives none. */
export async function simulationWorld(): Promise<SimulationWorld> {
  if (EXAMPLE.simulation === undefined)
    throw new Error(
      "The example's tooling module gives no simulated world (`simulation`, tools/simulation/contract.ts): there is nothing to simulate.",
    );
  return EXAMPLE.simulation();
}
