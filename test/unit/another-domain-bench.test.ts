import { useAnotherDomainCopy } from '../support/another-domain-copy';

/**
 * `npm run bench` in the another-domain copy (test/support/another-domain-copy.ts: the repository
 * without the shop, the bookings of packages/tools/templates/domain in its place), with no plug-in of its own.
 * Apart from another-domain.test.ts so the two run side by side.
 */
const SLOW = 300_000;
const { run } = useAnotherDomainCopy();

test(
  'the bench runs on the bookings with no plug-in of its own: this design on either ledger applies every faulted message once, the pipeline drains',
  () => {
    // Its quick profile, as a user runs it: synth with bundling, the emulators, every measurement (about 3 min).
    const { status, output } = run('tsx', ['packages/tools/src/bench/cli.ts', '--profile', 'quick']);

    expect(output).toMatch(/emulator limit [\d.]+ bookings\/s/);
    expect(output).toMatch(/pipeline [\d.]+ bookings\/s over the steady window.*drained: yes/);
    expect(output).toContain('effect lag rooms');
    expect(output).toMatch(
      /double effects under crash and duplicate faults \(200 messages, seed 7\): this 0, on the sequenced ledger 0, plain [1-9]/,
    );
    expect(output).not.toContain('order');
    expect(status).toBe(0);
  },
  3 * SLOW,
);
