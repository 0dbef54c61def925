import type { FaultName, FaultSettings } from '@exactly-once/tools/proof-kit/faults';
import type { RunResults } from '@exactly-once/tools/proof-kit/report';
import { expectOwnMark, MIN_ORDERS_PER_RUN, totalSuppressed } from './proof-kit-fixture';

/**
 * The fault matrix as two runs instead of one per fault: the faults inside the consumers, and the
 * faults around them (producer, relay, providers, operator), each fault's evidence asserted apart;
 * proof-kit.test.ts runs both on one runtime.
 */
export const FAULT_GROUPS: readonly {
  faults: FaultName[];
  rate: number;
  rates?: FaultSettings['rates'];
  seed: number;
}[] = [
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

/**
 * One fault group's run on a test file's runtime (`run`, from useProofKitRuntime): effects equal
 * intents, and each of its faults left its own mark.
 */
export function describeFaultGroup(
  run: (
    faults: FaultName[],
    seed: number,
    options: { rate?: number; rates?: FaultSettings['rates'] },
  ) => Promise<RunResults>,
  group: (typeof FAULT_GROUPS)[number],
): void {
  describe(`faults ${group.faults.join(', ')} in one run`, () => {
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
}
