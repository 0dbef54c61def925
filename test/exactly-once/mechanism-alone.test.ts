import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, normalize, resolve } from 'node:path';
import { runInCopy, linkNodeModules } from '../support/repo-copy';

/**
 * The mechanism stands alone: a copy of the repository with only the two exactly-once folders, the
 * mechanism's own tests (test/exactly-once) and the test support they import, and nothing of the
 * example, the tools or bin/, type-checks and passes those tests. An import of the example that
 * slipped past the lint rule fails here.
 */
const REPO = resolve(__dirname, '../..');
const MECHANISM = ['packages/runtime/', 'packages/cdk/', 'test/exactly-once/'];
const SLOW = 240_000;

const tracked = (): string[] =>
  execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: REPO, encoding: 'utf8' })
    .split('\0')
    .filter((path) => path !== '' && existsSync(join(REPO, path)));

const SPECIFIER = /(?:from|import\(|require\(|jest\.mock\()\s*['"](\.{1,2}\/[^'"]+)['"]/g;

/**
 * The test-support files `files` import, transitively (relative specifiers only). Imports of
 * anything else outside the mechanism are not followed: the copy must type-check without them.
 */
function importClosure(files: string[]): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const [, specifier] of readFileSync(join(REPO, file), 'utf8').matchAll(SPECIFIER)) {
      const base = normalize(join(dirname(file), specifier));
      const target = [base, `${base}.ts`, `${base}.js`, join(base, 'index.ts')].find(
        (candidate) => existsSync(join(REPO, candidate)) && !candidate.endsWith('/') && candidate.includes('.'),
      );
      if (target !== undefined && [...MECHANISM, 'test/support/'].some((folder) => target.startsWith(folder)))
        visit(target);
    }
  };
  files.forEach(visit);
  return seen;
}

let copy: string;
let copied: string[];

beforeAll(() => {
  copy = mkdtempSync(join(tmpdir(), 'exactly-once-alone-'));
  const mechanism = tracked().filter((path) => MECHANISM.some((folder) => path.startsWith(folder)));
  copied = [...new Set([...importClosure(mechanism.filter((p) => p.endsWith('.ts'))), ...mechanism])].sort();
  // The lockfile too: a construct test builds NodejsFunctions, which look for it.
  for (const path of [...copied, 'tsconfig.json', 'package.json', 'package-lock.json']) {
    mkdirSync(dirname(join(copy, path)), { recursive: true });
    cpSync(join(REPO, path), join(copy, path));
  }
  linkNodeModules(REPO, copy);
  writeFileSync(
    join(copy, 'jest.config.js'),
    `module.exports = {
  transform: { '^.+\\\\.tsx?$': ['@swc/jest', { jsc: { target: 'es2022' } }] },
  testEnvironment: 'node',
  testMatch: ['<rootDir>/test/exactly-once/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', 'mechanism-alone\\.test\\.ts$'],
};
`,
  );
});

afterAll(() => rmSync(copy, { recursive: true, force: true }));

const run = (tool: string, args: string[]) => runInCopy(copy, tool, args);

test('the copy holds the mechanism and its tests, and nothing of the example, the tools or bin', () => {
  const outside = copied.filter((path) => !MECHANISM.some((folder) => path.startsWith(folder)));

  expect(
    copied.filter((path) => path.startsWith('test/exactly-once/') && path.endsWith('.test.ts')).length,
  ).toBeGreaterThan(2);
  expect(outside.every((path) => path.startsWith('test/support/'))).toBe(true);
  for (const absent of ['lambdas/shop', 'lib/shop', 'packages/tools', 'bin'])
    expect(existsSync(join(copy, absent))).toBe(false);
});

test(
  'the two exactly-once folders type-check without the example',
  () => {
    const { status, output } = run('tsc', ['--noEmit', '-p', '.']);

    expect(output).toBe('');
    expect(status).toBe(0);
  },
  SLOW,
);

test(
  "the mechanism's own tests pass without the example",
  () => {
    const { status, output } = run('jest', ['--ci']);

    expect(output).toMatch(/Tests:\s+\d+ passed, \d+ total/);
    expect(output).not.toMatch(/failed/);
    expect(status).toBe(0);
  },
  SLOW,
);
