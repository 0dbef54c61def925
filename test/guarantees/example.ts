import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { exampleName } from '../support/example-reach';
import type { ExampleRegistry } from './registry';

/** Where the example keeps its registry: `tooling/<example>/guarantees.ts`, by the name in package.json. */
export function exampleRegistryFile(root: string): string {
  return `tooling/${exampleName(root)}/guarantees.ts`;
}

/**
 * The example's registry (`guarantees` of {@link exampleRegistryFile}), or undefined when the example
 * has none (a fork that lists no guarantees of its own). Loaded by its path, as packages/tools/src/load-domain.ts loads
 * the example's tooling: a static import would tie the mechanism's registry, and every test that reads
 * it, to the example (test/support/example-reach.ts), and the example's file imports this folder's types.
 * A file that is there but exports no `guarantees` is an error, not an empty registry.
 *
 * @example
 * ```ts
 * const example = loadExampleRegistry(ROOT);
 * const problems = checkRegistries(REGISTRY, example, ROOT);
 * ```
 */
export function loadExampleRegistry(root: string): ExampleRegistry | undefined {
  const file = exampleRegistryFile(root);
  if (!existsSync(join(root, file))) return undefined;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a path from configuration: see above
  const { guarantees } = require(join(root, file)) as { guarantees?: ExampleRegistry };
  if (guarantees === undefined)
    throw new Error(`${file} exports no \`guarantees\` (an ExampleRegistry, test/guarantees/registry.ts).`);
  return guarantees;
}
