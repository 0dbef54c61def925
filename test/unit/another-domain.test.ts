import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { useAnotherDomainCopy } from '../support/another-domain-copy';
import { exampleName } from '../support/example-reach';

/**
 * The example replaced by another domain with one command: in a copy of the repository,
 * `npm run new:domain bookings` removes the shop (its runtime code, its stack, and every test that
 * reaches it) and writes the skeleton domain (packages/tools/templates/domain) under another folder
 * name: a POST /bookings on the mechanism's idempotent command, one FIFO consumer (`rooms`) whose own
 * state is the nights booked per room, one provider, the proof kit's domain and the simulation's
 * plug-in. No file of the mechanism, the tools, bin/ or the build changes. The copy type-checks, lints,
 * runs the simulation engine on bookings (and it finds a guard switched off), and synthesizes both
 * stages with cdk-nag and the correctness aspects. The unit and infra tiers in the copy:
 * another-domain-tiers.test.ts; its `npm start` under the proof kit and `npm run bench`:
 * another-domain-runtime.test.ts (each on a copy of its own, side by side).
 */
const REPO = resolve(__dirname, '../..');
/** The example's folder name (lambdas/<it>, lib/<it>, tooling/<it>), as package.json names it here. */
const EXAMPLE = exampleName(REPO);
const SLOW = 300_000;

const domain = useAnotherDomainCopy();
const run = domain.run;
const inCopy = (path: string) => readFileSync(join(domain.copy(), path), 'utf8');
const inRepo = (path: string) => readFileSync(join(REPO, path), 'utf8');

// 18 files: each of its two functions is a factory and a one-line deployed binding (docs/architecture.md,
// "Entry modules"), and its simulation plug-in sets no environment variable (no module of its own for it).
test('the new domain is at most 18 files, all in its folders and its tests; its plug-ins for the tools at most 300 lines', () => {
  const pluginLines = domain.template
    .filter(({ path }) => path.startsWith('tooling/'))
    .reduce((lines, { text }) => lines + text.split('\n').length - 1, 0);
  const inPlace = new RegExp(`^((lambdas|lib|tooling)/${domain.name}|test/(unit|infra))/`);

  expect(domain.written.length).toBeLessThanOrEqual(18);
  expect(pluginLines).toBeLessThanOrEqual(300);
  expect(domain.written.every((path) => inPlace.test(path))).toBe(true);
  for (const path of domain.written) expect(inCopy(path)).toBe(domain.template.find((t) => t.path === path)!.text);
});

test('new:domain changed nothing of the mechanism, the tools, bin/ or the stages; it set the name in package.json and lib/app-stack.ts only', () => {
  for (const kept of [
    'packages/tools/src/load-domain.ts',
    'packages/tools/src/domain.ts',
    'bin/app.ts',
    'lib/config.ts',
    'tsconfig.json',
    'cdk.json',
  ])
    expect(inCopy(kept)).toBe(inRepo(kept));
  expect(inCopy('package.json')).toBe(
    inRepo('package.json').replace(`"example": "${EXAMPLE}"`, `"example": "${domain.name}"`),
  );
  expect(inCopy('lib/app-stack.ts')).toBe(
    inRepo('lib/app-stack.ts').replace(
      `from './${EXAMPLE}/${EXAMPLE}-stack'`,
      `from './${domain.name}/${domain.name}-stack'`,
    ),
  );
  for (const folder of ['lambdas', 'lib', 'tooling'])
    expect(existsSync(join(domain.copy(), folder, EXAMPLE))).toBe(false);
});

test("without the shop the mechanism's guarantee page is unchanged, and the example's says the example lists none", () => {
  expect(inCopy('packages/GUARANTEES.md')).toBe(inRepo('packages/GUARANTEES.md'));
  expect(inCopy('docs/guarantees.md')).toContain(
    `**The example's guarantees**: the example has no registry (tooling/${domain.name}/guarantees.ts), so it lists none.`,
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
      run('tsx', ['packages/tools/src/simulation/cli.ts', '--intents', '600', '--per-schedule', '100', ...args]);

    const guarded = sim();
    const unguarded = sim('--guard', 'inboxClaim=false');

    expect(guarded.output).toContain('simulated 600 bookings');
    expect(guarded.output).toContain('every invariant held');
    expect(guarded.status).toBe(0);
    expect(unguarded.output).toMatch(/VIOLATION in schedule seed \d+/);
    expect(unguarded.status).not.toBe(0);
  },
  SLOW,
);
