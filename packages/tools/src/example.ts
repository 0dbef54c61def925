import type { ConsumerSpec } from '@exactly-once/runtime/consumer-spec';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { LocalProviderApi } from './local-runtime/provider/apis';
import type { ProofDomain } from './proof-kit/domain';
import type { SimulationWorld } from './simulation/contract';
import { PROJECT_DIR } from '@exactly-once/cdk/project-dir';

/**
 * What a tool may know of the example's domain: the plug-ins the example gives the tools, exported as
 * `tooling` from `tooling/<example>/index.ts`, where `<example>` is `exactlyOnce.example` in
 * package.json (the one line a fork with another domain edits). Every tool (the DLQ tool, the stack
 * helpers, the scaffolder, the local runtime and its provider, the proof kit, the simulation, the bench)
 * takes everything it knows of the domain from {@link example} and from nothing else of the example; a
 * lint rule holds packages/tools/src/ to it.
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

const ROOT = PROJECT_DIR;

/** The example's folder name, from package.json (`exactlyOnce.example`): lambdas/<it>, lib/<it>, tooling/<it>. */
export function exampleFolderName(root = ROOT): string {
  const config = (
    JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exactlyOnce?: { example?: unknown } }
  ).exactlyOnce;
  const name = config?.example;
  if (typeof name !== 'string' || !/^[a-z][a-z0-9-]*$/.test(name))
    throw new Error(
      'package.json has no `exactlyOnce.example` naming the example\'s folder (lower-case, e.g. "shop"): the tools cannot find the example.',
    );
  return name;
}

/**
 * The environment variable that points the tools at another tooling module than the example's: a path
 * to a module exporting `tooling` (absolute, or relative to the repository root). The runtime tests set
 * it to run the mechanism's proofs on the neutral fixture (test/support/probe-tooling.ts) with the
 * example deleted; a fork never needs it. Processes the tools start (the local runtime's) inherit it.
 */
export const TOOLING_MODULE_ENV = 'EXACTLY_ONCE_TOOLING';

/** The tooling module the tools load: `$EXACTLY_ONCE_TOOLING` if set, else `tooling/<example>` (no extension). */
export function toolingModulePath(root = ROOT, env: NodeJS.ProcessEnv = process.env): string {
  const override = env[TOOLING_MODULE_ENV];
  if (override === undefined || override === '') return join(root, 'tooling', exampleFolderName(root));
  return resolve(root, override);
}

/**
 * Loads the tooling module at `modulePath` (resolved as `require` does, so with or without `.ts`): its
 * `tooling`, or a clear error naming the path when there is no such module or it exports no `tooling`.
 */
export function loadTooling(modulePath: string): ExampleTooling {
  let module: { tooling?: ExampleTooling };
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a path from configuration: see example()
    module = require(modulePath) as { tooling?: ExampleTooling };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Only the module itself missing is ours to explain; a module that fails while loading says why itself.
    if (code === 'MODULE_NOT_FOUND' && (error as Error).message.startsWith(`Cannot find module '${modulePath}'`))
      throw new Error(
        `No tooling module at ${modulePath} (from ${process.env[TOOLING_MODULE_ENV] ? `$${TOOLING_MODULE_ENV}` : 'package.json exactlyOnce.example'}): the tools cannot find the domain.`,
      );
    throw error;
  }
  const { tooling } = module;
  if (tooling === undefined || tooling === null || typeof tooling !== 'object')
    throw new Error(`${modulePath} exports no \`tooling\` (packages/tools/src/example.ts says what it must hold).`);
  return tooling;
}

let loaded: ExampleTooling | undefined;

/**
 * The example's tooling (`tooling` of `tooling/<example>/index.ts`, or of the module
 * `$EXACTLY_ONCE_TOOLING` names: {@link TOOLING_MODULE_ENV}), loaded on first use. Loaded by its
 * path, not imported: the example's plug-ins import the tools' engines (the simulation, the proof kit),
 * and an import back from the tools would tie both into one circle (test/unit/import-graph.test.ts).
 *
 * @example
 * ```ts
 * import { example } from '../example';
 *
 * const queues = example().consumers.map((consumer) => consumer.name);
 * ```
 */
export function example(): ExampleTooling {
  loaded ??= loadTooling(toolingModulePath());
  return loaded;
}

/** The example's proof domain; a clear error when it gives none (the kit cannot judge a run without one). */
export function proofDomain(): ProofDomain {
  const { proof } = example();
  if (proof === undefined)
    throw new Error(
      "The example's tooling module gives no proof domain (`proof`, packages/tools/src/proof-kit/domain.ts): the proof kit has no plan to send and no invariants to judge.",
    );
  return proof;
}

/** The example's simulated world; a clear error when it gives none. */
export async function simulationWorld(): Promise<SimulationWorld> {
  const { simulation } = example();
  if (simulation === undefined)
    throw new Error(
      "The example's tooling module gives no simulated world (`simulation`, packages/tools/src/simulation/contract.ts): there is nothing to simulate.",
    );
  return simulation();
}
