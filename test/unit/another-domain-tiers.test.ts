import { useAnotherDomainCopy } from '../support/another-domain-copy';

/**
 * The unit and infra tiers in the another-domain copy (test/support/another-domain-copy.ts: the
 * repository without the shop, the bookings of packages/tools/templates/domain in its place): the bookings'
 * own tests and every test that survives deleting the shop. Apart from another-domain.test.ts so
 * the two run side by side.
 */
const SLOW = 300_000;
const { run } = useAnotherDomainCopy();

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
