import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ExampleTooling } from './domain';

/**
 * Where the tools' domain comes from, read once by each command-line entry point (start, call, loadtest,
 * dlq, bench, sim, new:consumer, new:domain) and handed down to the engines, which never load it
 * themselves: `tooling` of the module `--tooling` names, else of `tooling/<example>/index.ts`, where
 * `<example>` is `exactlyOnce.example` in package.json. Loaded by its path, not imported: the example's
 * plug-ins import the tools' engines (the simulation, the proof kit), and an import back from the tools
 * would tie both into one circle (test/unit/import-graph.test.ts).
 */

/**
 * The example's folder name, from package.json (`exactlyOnce.example`): lambdas/<it>, lib/<it>, tooling/<it>.
 *
 * @example
 * ```ts
 * const lib = join(root, 'lib', exampleFolderName(root)); // <root>/lib/shop
 * ```
 */
export function exampleFolderName(root: string): string {
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

/** Where the domain is taken from, besides the application's root. */
export interface DomainSource {
  /**
   * A tooling module to load instead of the example's (the `--tooling` flag): a path, absolute or
   * relative to the root, of a module exporting `tooling`. The runtime tests name the neutral fixture's.
   * @default `tooling/<exactlyOnce.example>`
   */
  readonly toolingModule?: string;
}

/**
 * The tooling module's path (no extension needed): `toolingModule` resolved from `root` if given, else
 * `tooling/<example>`.
 *
 * @example
 * ```ts
 * toolingModulePath('/app'); // '/app/tooling/shop'
 * toolingModulePath('/app', { toolingModule: 'test/support/probe-tooling.ts' }); // '/app/test/support/probe-tooling.ts'
 * ```
 */
export function toolingModulePath(root: string, source: DomainSource = {}): string {
  const { toolingModule } = source;
  if (toolingModule === undefined || toolingModule === '') return join(root, 'tooling', exampleFolderName(root));
  return resolve(root, toolingModule);
}

/**
 * Loads the tooling module at `modulePath` (resolved as `require` does, so with or without `.ts`): its
 * `tooling`, or a clear error naming the path (and `from`, where the path came from) when there is no
 * such module or it exports no `tooling`.
 *
 * @example
 * ```ts
 * const domain = loadTooling('/app/tooling/shop', 'package.json exactlyOnce.example');
 * ```
 */
export function loadTooling(modulePath: string, from = 'package.json exactlyOnce.example'): ExampleTooling {
  let module: { tooling?: ExampleTooling };
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a path from configuration: see the header
    module = require(modulePath) as { tooling?: ExampleTooling };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Only the module itself missing is ours to explain; a module that fails while loading says why itself.
    if (code === 'MODULE_NOT_FOUND' && (error as Error).message.startsWith(`Cannot find module '${modulePath}'`))
      throw new Error(`No tooling module at ${modulePath} (from ${from}): the tools cannot find the domain.`);
    throw error;
  }
  const { tooling } = module;
  if (tooling === undefined || tooling === null || typeof tooling !== 'object')
    throw new Error(`${modulePath} exports no \`tooling\` (packages/tools/src/domain.ts says what it must hold).`);
  return tooling;
}

/**
 * The domain the tools run on: the `tooling` of the module `source.toolingModule` names, else of the
 * example's (`tooling/<exactlyOnce.example>`). Only the command-line entry points call it, once; they
 * pass what it returns down to the engines.
 *
 * @example
 * ```ts
 * const domain = loadDomain(PROJECT_DIR, { toolingModule: flags.tooling });
 * const queues = domain.consumers.map((consumer) => consumer.name);
 * ```
 */
export function loadDomain(root: string, source: DomainSource = {}): ExampleTooling {
  const from =
    source.toolingModule === undefined || source.toolingModule === ''
      ? 'package.json exactlyOnce.example'
      : '--tooling';
  return loadTooling(toolingModulePath(root, source), from);
}
