import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { useAnotherDomainCopy } from '../support/another-domain-copy';
import { exampleName } from '../support/example-reach';

/**
 * The example replaced by another domain: a copy of the repository without the shop (its runtime
 * code, its stack, and every test that reaches it), with the bookings
 * domain of packages/tools/templates/domain in its place: a POST /bookings on the mechanism's idempotent
 * command, one FIFO consumer (`rooms`, made by `npm run new:consumer`) whose own state is the nights
 * booked per room, one provider, the proof kit's domain and the simulation's plug-in. No file of the
 * mechanism, the tools, bin/ or the build changes. The copy type-checks, lints, passes the bookings
 * tests, runs the simulation engine on bookings (and it finds a guard switched off), and synthesizes
 * both stages with cdk-nag and the correctness aspects. The unit and infra tiers in the copy:
 * another-domain-tiers.test.ts; `npm run bench` on it: another-domain-bench.test.ts; its `npm start`
 * under the proof kit: another-domain-runtime.test.ts (each on a copy of its own, side by side).
 */
const REPO = resolve(__dirname, '../..');
/** The example's folder (lambdas/<it>, lib/<it>, tooling/<it>), as package.json names it; the bookings take its place. */
const EXAMPLE = exampleName(REPO);
const SLOW = 300_000;

const domain = useAnotherDomainCopy({ renderGuarantees: true });
const written = domain.written;
const run = domain.run;

test('the new domain is at most 17 files, all in the example folders and its tests; its plug-ins for the tools at most 300 lines', () => {
  expect(written.length).toBeLessThanOrEqual(17);
  const pluginLines = domain.template
    .filter(({ path }) => path.startsWith('tooling/'))
    .reduce((lines, { text }) => lines + text.split('\n').length - 1, 0);
  expect(pluginLines).toBeLessThanOrEqual(300);
  const inPlace = new RegExp(`^((lambdas|lib|tooling)/${EXAMPLE}|test/(unit|infra))/`);
  expect(written.every((path) => inPlace.test(path))).toBe(true);
  for (const kept of ['packages/tools/src/example.ts', 'bin/app.ts', 'lib/config.ts', 'package.json'])
    expect(readFileSync(join(domain.copy(), kept), 'utf8')).toBe(readFileSync(join(REPO, kept), 'utf8'));
});

test("without the shop the mechanism's guarantee page is unchanged, and the example's says the example lists none", () => {
  const mechanismPage = (root: string) => readFileSync(join(root, 'packages/GUARANTEES.md'), 'utf8');

  expect(mechanismPage(domain.copy())).toBe(mechanismPage(REPO));
  expect(readFileSync(join(domain.copy(), 'docs/guarantees.md'), 'utf8')).toContain(
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
