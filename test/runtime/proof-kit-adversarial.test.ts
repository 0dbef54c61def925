import { htmlReport, type RunResults } from '@exactly-once/tools/proof-kit/report';
import { EACH_EVENT_ONCE } from '@exactly-once/tools/proof-kit/verify';
import { expectOwnMark, useProofKitRuntime } from './proof-kit-fixture';
import { tooling as probeTooling } from '../support/probe-tooling';

/**
 * The proof kit's adversarial faults on the local runtime, at small scale, on the probe app (as the
 * fault matrix of proof-kit.test.ts, on a runtime of its own so the two files run side by side on two
 * workers): each caught and reported for a person, never a pass. Then proof that the kit can fail:
 * with the consumers' inbox claims switched off (a test-only switch), the verification must report
 * the doubles.
 */
const { run } = useProofKitRuntime('proof-kit-adversarial', 'probe');

// An adversarial fault: caught (every copy dead-lettered, nothing applied twice or lost), yet never a pass.
describe('reused-id: copies of applied events with other content under their eventId', () => {
  let results: RunResults;
  beforeAll(async () => {
    results = await run(['reused-id'], 400);
  }, 900_000);

  test('each copy is dead-lettered as EventIdReused and reported for a person; every effect still equals its intent', () => {
    const findings = results.verification.violations.filter((v) => v.invariant === 'event-id-reused');

    expect(findings.length).toBeGreaterThan(0);
    expect(results.verification.violations).toEqual(findings);
    expect(results.verification.deadLetters).toEqual(
      expect.arrayContaining([expect.objectContaining({ cause: 'EventIdReused', count: expect.any(Number) })]),
    );
    expect(results.passed).toBe(false);
  });
});

// The other adversarial faults, a run each: in one run the relay could stamp a forged create's real event a
// day ahead, and the consumer refuses a future stamp before it claims, so that run would hold no
// EventIdReused to show (the right behaviour, but no evidence for the forged-first fault).
describe.each([
  ['forged-first', 401, 'EventIdReused', 'forged copies ahead of their events'],
  ['clock-skew-beyond', 402, 'OccurredInFuture', 'stamps a day ahead'],
] as const)('%s (seed %i): its dead letters say %s (%s)', (fault, seed, cause, _what) => {
  let results: RunResults;
  beforeAll(async () => {
    results = await run([fault], seed, { rate: 0.2 });
  }, 900_000);

  test('the fault left its findings for a person, and the run fails', () => {
    expectOwnMark(results, fault);
    expect(results.verification.deadLetters).toEqual(expect.arrayContaining([expect.objectContaining({ cause })]));
    expect(results.passed).toBe(false);
  });
});

// The kit can fail: every consumer broken in one run, and each violation says which way the effect is off.
describe('the kit can fail: with every inbox claim disabled, resent events are applied again and reported', () => {
  let results: RunResults;
  beforeAll(async () => {
    results = await run(['resend'], 300, { disableInboxClaim: probeTooling.consumers.map((c) => c.name) });
  }, 900_000);

  test('the run fails, and its report says so', () => {
    expect(results.passed).toBe(false);
    expect(htmlReport(results)).toContain('FAIL');
  });

  // The standard consumer counts each thing once under its claim: without the claim a resent
  // ThingHappened is counted again, and the domain's invariant says by how much.
  test('probe: duplicates are counted again, reported as "counted N times, not once"', () => {
    const doubles = results.verification.violations.filter((v) => v.invariant === 'counted');

    expect(doubles.length).toBeGreaterThan(0);
    for (const violation of doubles)
      expect(violation.detail).toMatch(/^thing \S+: counted ([2-9]|\d{2,}) times, not once$/);
  });

  // Every consumer on the list (one made by `npm run new:consumer` too) is caught by the generic invariant,
  // each event once per consumer, whether or not an effect-specific invariant covers it.
  test.each(probeTooling.consumers.map((c) => [c.name]))(
    '%s: the generic invariant reports its events as unclaimed',
    (name) => {
      expect(unclaimedBy(results, name)).toBeGreaterThan(0);
    },
  );
});

/** How many of the consumer's events the generic invariant found without an inbox claim. */
function unclaimedBy(results: RunResults, consumer: string): number {
  return results.verification.violations.filter(
    (v) =>
      v.invariant === EACH_EVENT_ONCE && v.detail.startsWith(`${consumer}: `) && v.detail.includes('no inbox claim'),
  ).length;
}
