import * as path from 'node:path';
import { watchDomainReads } from './domain-reads';
import { exampleName, exampleReach } from './example-reach';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const DOMAIN_TESTS: string[] = require('./domain-tests.cjs');

/**
 * Holds test/support/domain-tests.cjs honest (a setup file of the unit project): a unit test file that
 * reads the domain while it runs (test/support/domain-reads.ts) and is not on that list fails, naming
 * what it read. The another-domain copy runs only the listed files of this tier
 * (test/unit/another-domain-tiers.test.ts): a file reading the domain unlisted would be missing there.
 * A file that reaches the example is not watched: `npm run new:domain` removes it, so the copy has none.
 */
const ROOT = path.resolve(__dirname, '../..');
const FILE = path.relative(ROOT, expect.getState().testPath ?? '');

if (!DOMAIN_TESTS.includes(FILE) && !exampleReach(ROOT)(FILE)) {
  const watching = watchDomainReads(ROOT, exampleName(ROOT));
  afterAll(() => {
    watching.stop();
    if (watching.reads.size > 0)
      throw new Error(
        `${FILE} reads the domain (${[...watching.reads].join(', ')}) and is not on test/support/domain-tests.cjs: ` +
          'add it there, so the another-domain copy runs it (test/unit/another-domain-tiers.test.ts)',
      );
  });
}
