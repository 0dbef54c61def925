import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { useAnotherDomainCopy } from '../support/another-domain-copy';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const DOMAIN_TESTS: string[] = require('../support/domain-tests.cjs');

/**
 * The unit and infra tiers in the another-domain copy (test/support/another-domain-copy.ts: the
 * repository without the shop, the bookings of packages/tools/templates/domain in its place), as far as
 * the domain can change them: the bookings' own tests, the infra suite (it synthesizes the bookings'
 * stack), and the unit files that read the domain while they run (test/support/domain-tests.cjs; a unit
 * file that reads it unlisted fails, test/support/domain-reads.ts). Every other file that survives
 * deleting the shop runs the same code on the same files here as in this repository's own tiers.
 * Apart from another-domain.test.ts so the two run side by side.
 */
const SLOW = 300_000;
const domain = useAnotherDomainCopy();

test(
  'the bookings tests pass (one booking per key, one room-night count, one provider call per event), and so does every test of the unit and infra tiers that reads the domain',
  () => {
    const own = domain.written.filter((path) => /^test\/unit\/.*\.test\.ts$/.test(path));
    const survivors = DOMAIN_TESTS.filter((path) => existsSync(join(domain.copy(), path)));
    const files = [...own, ...survivors, 'test/infra/all.suite.ts'];

    const { status, output } = domain.run('jest', [
      '--ci',
      '--selectProjects',
      'unit',
      'infra',
      '--runTestsByPath',
      ...files,
    ]);

    expect(output).toMatch(new RegExp(`Test Suites:\\s+${files.length} passed, ${files.length} total`));
    expect(output).toMatch(/Tests:\s+\d+ passed, \d+ total/);
    expect(output).not.toMatch(/Tests:.*(failed|skipped)/);
    expect(output).toMatch(/PASS .*test\/unit\/rooms-consumer\.test\.ts/);
    expect(output).toMatch(/PASS .*test\/infra\/all\.suite\.ts/);
    expect(status).toBe(0);
  },
  3 * SLOW,
);
