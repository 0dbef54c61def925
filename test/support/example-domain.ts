import { join } from 'node:path';
import type { ExampleTooling } from '@exactly-once/tools/domain';
import { loadDomain } from '@exactly-once/tools/load-domain';

/**
 * The example's domain (`tooling/<exactlyOnce.example>`), loaded as the commands' entry points load it,
 * for tests that hand the example's consumers or proof domain to the tools' engines.
 */
export function exampleDomain(): ExampleTooling {
  return loadDomain(join(__dirname, '..', '..'));
}
