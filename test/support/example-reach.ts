import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { exampleReach as reachOf } from '@exactly-once/tools/scaffolder/example-reach';

/** The example's folder name, as package.json names it for the tools (`exactlyOnce.example`). */
export function exampleName(root: string): string {
  return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exactlyOnce: { example: string } })
    .exactlyOnce.example;
}

/**
 * Whether a test file reaches the example (packages/tools/src/scaffolder/example-reach.ts, the rule
 * `npm run new:domain` removes tests by): a test that does not reach it runs with the example deleted.
 */
export function exampleReach(root: string): (file: string) => boolean {
  return reachOf(root, exampleName(root));
}
