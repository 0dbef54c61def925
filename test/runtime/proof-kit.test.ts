import '../support/probe-tooling-env';
import { example } from '@exactly-once/tools/example';
import { ALL_FAULTS, type FaultName, type FaultSettings } from '@exactly-once/tools/proof-kit/faults';
import { faultMarks } from '@exactly-once/tools/proof-kit/fault-marks';
import { htmlReport, type RunResults } from '@exactly-once/tools/proof-kit/report';
import { EACH_EVENT_ONCE } from '@exactly-once/tools/proof-kit/verify';
import { MIN_ORDERS_PER_RUN, SMALL, totalSuppressed, useProofKitRuntime } from './proof-kit-fixture';

/**
 * The proof kit's fault matrix on the local runtime, at small scale, on the probe app (the neutral
 * fixture's stack: things made by POST /things, some undone by POST /things/{thingId}/undo, taken by
 * a standard, a FIFO and a stateful consumer), so it runs with the example deleted: the faults in
 * two groups (each fault's own evidence asserted), every run verified against the
 * invariants of docs/proof-kit.md. Then proof that the kit can fail: with the
 * consumers' inbox claims switched off (a test-only switch), the verification must
 * report the doubles. All faults at once, on the example: proof-kit-all-faults.test.ts; long
 * outages: outages.test.ts.
 */
const { run } = useProofKitRuntime('proof-kit', 'probe');

/** The DLQ copies the redrive fault seeds (packages/tools/src/proof-kit/run.ts): at least two, one per ten things. */
const SEEDED_DEAD_LETTERS = Math.max(2, Math.ceil(SMALL.intents / 10));

/**
 * Each fault left its mark, as the kit counts it for the report (packages/tools/src/proof-kit/fault-marks.ts: the
 * host's, the provider's, the kit's or the verdict's count), with what the mark must also say for some.
 * A fault shares a run only with faults that cannot leave the same mark (the groups below), so each mark
 * is proof that its own fault fired.
 */
function expectOwnMark(r: RunResults, fault: FaultName): void {
  const marks = faultMarks(r);
  expect({ fault, marks: marks[fault] }).toEqual({ fault, marks: expect.any(Number) });
  expect(marks[fault]).toBeGreaterThan(0);
  if (fault === 'poison')
    expect(r.verification.deadLetters).toEqual(
      expect.arrayContaining([expect.objectContaining({ cause: 'poison (SchemaViolation)', count: 2 })]),
    );
  // The seeded copies came back from the DLQs to their sources.
  if (fault === 'redrive') expect(r.injected.redriven).toBeGreaterThanOrEqual(SEEDED_DEAD_LETTERS);
  // The forged copy was applied in the real event's place, and the real one was dead-lettered as EventIdReused.
  if (fault === 'forged-first') expect(marks['reused-id']).toBeGreaterThan(0);
  // The provider forgot the keys it had answered before the redrive, and the redrive still sent nothing twice.
  if (fault === 'keys-forgotten') expect(marks['keys-forgotten']).toBe(r.injected.providerKeysForgotten);
}

/**
 * The fault matrix as two runs instead of one per fault: the faults inside the consumers, and the
 * faults around them (producer, relay, providers, operator), each fault's evidence asserted apart.
 */
const FAULT_GROUPS: readonly { faults: FaultName[]; rate: number; rates?: FaultSettings['rates']; seed: number }[] = [
  // Three ways a try goes wrong: at 0.2 each a message still gets through in a few tries.
  { faults: ['crash', 'slow', 'transient'], rate: 0.2, seed: 100 },
  // The relay crashes at most once per batch it dispatches first: at rate 1 every batch crashes once,
  // then goes through. The others at 0.3, as each would run alone, but the provider's own faults lower:
  // each fires on its first request anyway, which is all its evidence needs, and at a rate they stretch
  // the drain (a slow answer holds a call for 11 s, a 429 or a 503 backs the message off).
  {
    faults: [
      'relay-crash',
      'resend',
      'clock-skew',
      'poison',
      'redrive',
      'provider-outage',
      'answer-lost',
      'slow-answer',
      'rate-limited',
      'server-errors',
      'keys-forgotten',
    ],
    rate: 0.3,
    rates: { 'relay-crash': 1, 'answer-lost': 0.1, 'slow-answer': 0, 'rate-limited': 0, 'server-errors': 0 },
    seed: 101,
  },
];

test('the fault groups cover every fault, each once', () => {
  const grouped = FAULT_GROUPS.flatMap((g) => g.faults);

  expect([...grouped].sort()).toEqual([...ALL_FAULTS].sort());
});

describe.each(FAULT_GROUPS.map((g) => [g.faults.join(', '), g]))('faults %s in one run', (_names, group) => {
  test('effects equal intents, and each fault left its own mark', async () => {
    const results = await run(group.faults, group.seed, { rate: group.rate, rates: group.rates });

    expect(results.verification.violations).toEqual([]);
    expect(results.passed).toBe(true);
    expect(results.verification.counts.entities).toBe(results.verification.counts.intents);
    expect(results.verification.counts.entities).toBeGreaterThanOrEqual(MIN_ORDERS_PER_RUN);
    // Each fault must actually have happened, or the run proves nothing about it.
    for (const fault of group.faults) expectOwnMark(results, fault);
    expect(totalSuppressed(results)).toBeGreaterThan(0);
    // The runtime recorded the run's spans, and the report draws the slowest thing's trace hop by hop.
    expect(new Set(results.trace?.slowest?.spans.map((s) => s.hop))).toEqual(
      new Set(['api', 'outbox-write', 'relay', 'queue-wait', 'consumer', 'provider-call']),
    );
  }, 900_000);
});

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
    results = await run(['resend'], 300, { disableInboxClaim: example().consumers.map((c) => c.name) });
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
  test.each(example().consumers.map((c) => [c.name]))(
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
