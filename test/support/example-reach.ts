import { exampleFolderName } from '@exactly-once/tools/load-domain';
import { exampleReach as reachOf } from '@exactly-once/tools/scaffolder/example-reach';

/** The example's folder name, as package.json names it for the tools (`exactlyOnce.example`), read as they read it. */
export const exampleName = (root: string): string => exampleFolderName(root);

/**
 * Whether a test file reaches the example (packages/tools/src/scaffolder/example-reach.ts, the rule
 * `npm run new:domain` removes tests by): a test that does not reach it runs with the example deleted.
 */
export function exampleReach(root: string): (file: string) => boolean {
  return reachOf(root, exampleName(root));
}
