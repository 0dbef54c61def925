import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { watchDomainReads } from '../support/domain-reads';
import { exampleReach } from '../support/example-reach';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const DOMAIN_TESTS: string[] = require('../support/domain-tests.cjs');

/**
 * test/support/domain-tests.cjs, the unit files the another-domain copy runs of its tier
 * (test/unit/another-domain-tiers.test.ts), held honest: test/support/domain-reads-setup.ts fails a unit
 * file that reads the domain unlisted, by what it reads while it runs (test/support/domain-reads.ts);
 * these tests hold the list to files that exist and survive `npm run new:domain`, the watcher to what it
 * must see, and the reads no watcher sees (a list imported with `require`) to the list.
 */
const ROOT = resolve(__dirname, '../..');
const UNIT_FOLDERS = ['test/unit', 'test/exactly-once', 'test/simulation'];
/** The long project's files: they live in the unit folders, and the copy never runs them. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const LONG: string[] = require('../../jest.config.js')
  .projects.find((project: { displayName: string }) => project.displayName === 'long')
  .testMatch.map((file: string) => file.replace('<rootDir>/', ''));

test('every listed file is a unit-tier test file that exists, once, and survives deleting the example', () => {
  const reaches = exampleReach(ROOT);

  const wrong = DOMAIN_TESTS.filter(
    (file) =>
      !existsSync(join(ROOT, file)) ||
      !UNIT_FOLDERS.some((folder) => file.startsWith(`${folder}/`)) ||
      !file.endsWith('.test.ts') ||
      LONG.includes(file) ||
      reaches(file),
  );

  expect(wrong).toEqual([]);
  expect(new Set(DOMAIN_TESTS).size).toBe(DOMAIN_TESTS.length);
});

test('a unit file that imports a data file of test/ (a list new:domain edits) is listed: no watcher sees a require', () => {
  const reaches = exampleReach(ROOT);
  const importsData = (file: string) =>
    /require\('\.[^']*\.(cjs|json)'\)|from '\.[^']*\.json'/.test(readFileSync(join(ROOT, file), 'utf8'));

  const unlisted = UNIT_FOLDERS.flatMap((folder) =>
    readdirSync(join(ROOT, folder))
      .filter((name) => name.endsWith('.test.ts'))
      .map((name) => `${folder}/${name}`),
  ).filter((file) => importsData(file) && !LONG.includes(file) && !reaches(file) && !DOMAIN_TESTS.includes(file));

  expect(unlisted).toEqual([]);
});

describe('the watcher', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'domain-reads-'));
    mkdirSync(join(root, 'lib/rentals'), { recursive: true });
    mkdirSync(join(root, 'packages'));
    writeFileSync(join(root, 'package.json'), '{}');
    writeFileSync(join(root, 'lib/rentals/rentals-stack.ts'), '');
    writeFileSync(join(root, 'lib/config.ts'), '');
    writeFileSync(join(root, 'packages/mechanism.ts'), '');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  test("sees package.json and the example's files read, the root listed and a process started, each once", () => {
    const watching = watchDomainReads(root, 'rentals');

    readFileSync(join(root, 'package.json'));
    readFileSync(join(root, 'package.json'));
    existsSync(join(root, 'lib/rentals/rentals-stack.ts'));
    readdirSync(root);
    spawnSync('true');
    watching.stop();

    expect([...watching.reads]).toEqual([
      'read package.json',
      'read lib/rentals/rentals-stack.ts',
      'listed the root',
      'spawnSync true',
    ]);
  });

  test("does not count the mechanism's files or the stages', and stops watching when stopped", () => {
    const watching = watchDomainReads(root, 'rentals');

    readFileSync(join(root, 'packages/mechanism.ts'));
    readFileSync(join(root, 'lib/config.ts'));
    readdirSync(join(root, 'packages'), { withFileTypes: false });
    watching.stop();
    readFileSync(join(root, 'package.json'));

    expect([...watching.reads]).toEqual([]);
  });
});
