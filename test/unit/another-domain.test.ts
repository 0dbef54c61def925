import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { exampleName, exampleReach } from '../support/example-reach';
import { runInCopy, linkNodeModules } from '../support/repo-copy';

/**
 * The example replaced by another domain: a copy of the repository without the shop (its runtime
 * code, its stack, and every test that reaches it), with the bookings
 * domain of test/fixtures/bookings in its place: a POST /bookings on the mechanism's idempotent
 * command, one FIFO consumer (`rooms`, made by `npm run new:consumer`) whose own state is the nights
 * booked per room, one provider, the proof kit's domain and the simulation's plug-in. No file of the
 * mechanism, the tools, bin/ or the build changes. The copy type-checks, lints, passes the bookings
 * tests, runs the simulation engine on bookings (and it finds a guard switched off), and synthesizes
 * both stages with cdk-nag and the correctness aspects; `npm run bench` runs on it with no plug-in of its own.
 */
const REPO = resolve(__dirname, '../..');
/** The example's folder (lambdas/<it>, lib/<it>, tooling/<it>), as package.json names it; the bookings take its place. */
const EXAMPLE = exampleName(REPO);
const FIXTURE = join(REPO, 'test/fixtures/bookings');
const SLOW = 300_000;

const tracked = (): string[] =>
  execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: REPO, encoding: 'utf8' })
    .split('\0')
    .filter((path) => path !== '' && existsSync(join(REPO, path)));

const fixtureFiles = (dir = FIXTURE): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? fixtureFiles(path) : [relative(FIXTURE, path)];
  });

const isExample = (path: string) =>
  path.startsWith(`lambdas/${EXAMPLE}/`) ||
  path.startsWith(`tooling/${EXAMPLE}/`) ||
  path.startsWith(`lib/${EXAMPLE}/`);

/** The tests that reach the shop, through their own imports or a test-support file's: the example's tests. */
function examplesTests(files: readonly string[]): Set<string> {
  const reaches = exampleReach(REPO);
  return new Set(files.filter((file) => file.startsWith('test/') && reaches(file)));
}

let copy: string;
const written = fixtureFiles();

beforeAll(() => {
  copy = mkdtempSync(join(tmpdir(), 'another-domain-'));
  const files = tracked().filter((path) => !path.startsWith('test/fixtures/bookings/'));
  const dropped = examplesTests(files);
  for (const path of files) {
    if (isExample(path) || dropped.has(path)) continue;
    mkdirSync(dirname(join(copy, path)), { recursive: true });
    cpSync(join(REPO, path), join(copy, path));
  }
  for (const path of written) {
    mkdirSync(dirname(join(copy, path)), { recursive: true });
    cpSync(join(FIXTURE, path), join(copy, path));
  }
  linkNodeModules(REPO, copy);
  // As a fork does after replacing the example: the guarantee pages are rendered again, from the
  // mechanism's registry and the new example's (the bookings have none), so the page tests hold there.
  const render = runInCopy(copy, 'tsx', ['test/guarantees/render.ts']);
  if (render.status !== 0) throw new Error(`rendering the guarantee pages in the copy failed:\n${render.output}`);
});

afterAll(() => rmSync(copy, { recursive: true, force: true }));

const run = (tool: string, args: string[]) => runInCopy(copy, tool, args);

test('the new domain is at most 17 files, all in the example folders and its tests; its plug-ins for the tools at most 300 lines', () => {
  expect(written.length).toBeLessThanOrEqual(17);
  const pluginLines = written
    .filter((path) => path.startsWith('tooling/'))
    .reduce((lines, path) => lines + readFileSync(join(FIXTURE, path), 'utf8').split('\n').length - 1, 0);
  expect(pluginLines).toBeLessThanOrEqual(300);
  const inPlace = new RegExp(`^((lambdas|lib|tooling)/${EXAMPLE}|test/(unit|infra))/`);
  expect(written.every((path) => inPlace.test(path))).toBe(true);
  for (const kept of ['packages/tools/src/example.ts', 'bin/app.ts', 'lib/config.ts', 'package.json'])
    expect(readFileSync(join(copy, kept), 'utf8')).toBe(readFileSync(join(REPO, kept), 'utf8'));
});

test("without the shop the mechanism's guarantee page is unchanged, and the example's says the example lists none", () => {
  const mechanismPage = (root: string) => readFileSync(join(root, 'packages/GUARANTEES.md'), 'utf8');

  expect(mechanismPage(copy)).toBe(mechanismPage(REPO));
  expect(readFileSync(join(copy, 'docs/guarantees.md'), 'utf8')).toContain(
    `**The example's guarantees**: the example has no registry (tooling/${EXAMPLE}/guarantees.ts), so it lists none.`,
  );
});

test(
  'the copy with bookings type-checks and lints: the mechanism and the tools need nothing of the shop',
  () => {
    const typecheck = run('tsc', ['--noEmit', '-p', '.']);
    const lint = run('eslint', ['.']);

    expect(typecheck.output).toBe('');
    expect(lint.output).toBe('');
  },
  SLOW,
);

test(
  'the bookings tests pass (one booking per key, one room-night count, one provider call per event), and so does every test of the unit and infra tiers that survives deleting the shop',
  () => {
    // Every test file that reaches none of the example's folders was copied: the mechanism's tests on the
    // neutral fixture and the tools' own, which must hold whatever the example is.
    const { status, output } = run('jest', ['--ci', '--selectProjects', 'unit', 'infra']);

    expect(output).toMatch(/Tests:\s+\d+ passed, \d+ total/);
    expect(output).not.toMatch(/Tests:.*(failed|skipped)/);
    expect(output).toMatch(/PASS .*test\/unit\/rooms-consumer\.test\.ts/);
    expect(output).toMatch(/PASS .*test\/simulation\/guards\.test\.ts/);
    expect(status).toBe(0);
  },
  3 * SLOW,
);

test(
  'both stages synthesize: cdk-nag finds nothing and the correctness aspects accept the template',
  () => {
    for (const stage of ['dev', 'prod']) {
      const { status, output } = run('cdk', ['synth', '--quiet', '-c', `stage=${stage}`, '-o', `cdk.out.${stage}`]);

      expect(output).not.toMatch(/AwsSolutions-|Error/);
      expect(status).toBe(0);
    }
  },
  SLOW,
);

test(
  'the simulation engine runs the bookings: every invariant holds over its schedules, and a switched-off inbox claim is found',
  () => {
    const sim = (...args: string[]) =>
      run('tsx', ['packages/tools/src/simulation/cli.ts', '--orders', '600', '--per-schedule', '100', ...args]);

    const guarded = sim();
    const unguarded = sim('--guard', 'inboxClaim=false');

    expect(guarded.output).toContain('simulated 600 orders');
    expect(guarded.output).toContain('every invariant held');
    expect(guarded.status).toBe(0);
    expect(unguarded.output).toMatch(/VIOLATION in schedule seed \d+/);
    expect(unguarded.status).not.toBe(0);
  },
  SLOW,
);

test(
  'the bench runs on the bookings with no plug-in of its own: this consumer applies every faulted message once, the pipeline drains',
  () => {
    // Its quick profile, as a user runs it: synth with bundling, the emulators, every measurement (about 3 min).
    const { status, output } = run('tsx', ['packages/tools/src/bench/cli.ts', '--profile', 'quick']);

    expect(output).toMatch(/emulator limit [\d.]+ bookings\/s/);
    expect(output).toMatch(/pipeline [\d.]+ bookings\/s over the steady window.*drained: yes/);
    expect(output).toContain('effect lag rooms');
    expect(output).toMatch(
      /double effects under crash and duplicate faults \(200 messages, seed 7\): this 0, plain [1-9]/,
    );
    expect(output).not.toContain('order');
    expect(status).toBe(0);
  },
  3 * SLOW,
);
