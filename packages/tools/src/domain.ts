import type { ConsumerSpec } from '@exactly-once/runtime/consumer-spec';
import type { LocalProviderApi } from './local-runtime/provider/apis';
import type { ProofDomain } from './proof-kit/domain';
import type { SimulationWorld } from './simulation/contract';

/**
 * What a tool may know of the example's domain: the plug-ins the example gives the tools, exported as
 * `tooling` from `tooling/<example>/index.ts`, where `<example>` is `exactlyOnce.example` in
 * package.json (the one line a fork with another domain edits). Every tool (the DLQ tool, the stack
 * helpers, the scaffolder, the local runtime and its provider, the proof kit, the simulation, the bench)
 * takes everything it knows of the domain from the one it is handed, and from nothing else of the example:
 * a command-line entry point loads it once (load-domain.ts) and passes it down; a lint rule holds
 * packages/tools/src/ to it. Types only: importing this module loads nothing.
 */
export interface ExampleTooling {
  /** The consumers, as the stack deploys them: their queues, DLQs and outputs are found by their names. */
  readonly consumers: readonly ConsumerSpec[];
  /** The stack output naming the table that holds the outbox (and its pending index): drains and redrives read it. */
  readonly outboxTableOutput: string;
  /**
   * What the proof kit (`npm run loadtest`) knows of the domain: its request plan, entities, events and
   * invariants (packages/tools/src/proof-kit/domain.ts). The bench (`npm run bench`) is built from it and from
   * `consumers`, and needs nothing else of the domain. Without it both refuse to run, saying so.
   */
  readonly proof?: ProofDomain;
  /**
   * The simulated world `npm run sim` runs (packages/tools/src/simulation/contract.ts), loaded on demand. Without it
   * the simulation refuses to run, saying so.
   */
  readonly simulation?: () => Promise<SimulationWorld>;
  /**
   * Whether a message body is one of the example's events as its consumers read them: anything
   * else a consumer refuses as SchemaViolation (poison), whatever the DLQ message's attributes say.
   */
  isEvent(body: string): boolean;
  /**
   * Where `npm run new:consumer` writes a consumer: `folder` (under lambdas/, holding `consumers.ts`
   * with the marker line and `consumerSpec`, and `entry-points/`, `use-cases/`, `aws/`), and the event
   * types the producers write (a FIFO consumer takes them all, a standard one the first). Without it
   * the scaffolder refuses to run, saying so.
   */
  readonly scaffold?: { readonly folder: string; readonly eventTypes: readonly string[] };
  /**
   * How the local provider (`npm start`) serves the providers the consumers name, by provider name,
   * where a real API of that kind answers or refuses differently from the default (201, any payload).
   * A provider named by a consumer and not described here is served with the defaults.
   */
  readonly localProviders?: Readonly<Record<string, LocalProviderApi>>;
  /** Requests `npm start` suggests trying, as arguments of `packages/tools/src/local-runtime/call.ts` (method, path, body, flags). */
  readonly tryIt?: readonly string[];
}
