import { inboxKey, SUPERSEDED_BY_ATTRIBUTE } from '@exactly-once/runtime/aws/inbox-table';
import { htmlReport, terminalSummary } from '@exactly-once/tools/proof-kit/report';
import { checkInvariants } from '@exactly-once/tools/proof-kit/verify';
import { PROBE_CONSUMERS } from '../exactly-once/fixtures/probe-spec';
import { PROBE_PROOF, type ThingItem } from '../support/neutral-proof-domain';
import { happenedEventIdOf, thingIdOf, undoneEventIdOf } from '../exactly-once/fixtures/probe-stack-things';
import { smokeRunResults } from '../support/run-results';

/**
 * The report's "applied" counts come from what was stored (the inbox claims),
 * not from the consumers' metrics, which a crashed invocation never flushes:
 * a run under the crash fault must not say "0 applied" next to a PASS. On the
 * neutral fixture's domain (things) and its probe consumers.
 */
const CALLER = 'arn:aws:iam::000000000000:user/AKIAREPORT0001';
const happened = thingIdOf(CALLER, 'k1');
const undone = thingIdOf(CALLER, 'k2');
const things: ThingItem[] = [
  { entity: 'THING', thingId: happened, status: 'HAPPENED', ownerId: 'lt-o1', amount: 1 },
  { entity: 'THING', thingId: undone, status: 'UNDONE', ownerId: 'lt-o1', amount: 1 },
];
const claim = (consumer: string, eventId: string) => ({
  ...inboxKey(consumer, eventId),
  consumer,
  eventId,
  claimedAt: '2026-01-01T00:00:00.000Z',
});

/** Every event claimed by its consumers, while the metrics saw probe apply nothing (its invocations crashed). */
function verification(
  metrics: Record<string, number> = {
    'EffectApplied{consumer=probe-fifo}': 2,
    'DuplicateSuppressed{consumer=probe-fifo}': 1,
    'DuplicateSuppressed{consumer=probe}': 5,
  },
) {
  return checkInvariants({
    runId: 'lt',
    consumers: PROBE_CONSUMERS,
    domain: PROBE_PROOF,
    checkIntents: false,
    plan: [],
    observations: [],
    entityIdOf: thingIdOf,
    isPoison: () => false,
    pendingOutbox: 0,
    metrics,
    entities: things,
    effectItems: [
      claim('probe-fifo', happenedEventIdOf(happened)),
      // The undone thing's ThingHappened was superseded before it was applied: an entry, but no claim.
      { ...inboxKey('probe-fifo', happenedEventIdOf(undone)), [SUPERSEDED_BY_ATTRIBUTE]: 'x' },
      claim('probe-fifo', undoneEventIdOf(undone)),
      claim('probe', happenedEventIdOf(happened)),
      claim('probe', happenedEventIdOf(undone)),
    ],
    providerItems: [],
    deadLetterQueues: [],
  });
}

test('applied effects are counted from the stored inbox claims, not from the metrics; a superseded-only entry is no claim', () => {
  const counted = verification();

  expect(counted.appliedEffects).toEqual({ 'probe-fifo': 2, probe: 2 });
  expect(counted.consumerMetrics.probe?.EffectApplied).toBeUndefined();
});

test('the terminal summary states the stored counts and how much of them the flushed metrics saw', () => {
  const summary = terminalSummary(smokeRunResults(verification()));

  expect(summary).toContain(
    "applied         probe 2, probe-fifo 2 (inbox claims stored for the judged things' events)",
  );
  expect(summary).toContain('metrics flushed (a crashed invocation flushes none): probe-fifo: 2 of 2 applied');
  expect(summary).toContain('probe: 0 of 2 applied, 5 duplicates suppressed');
  expect(summary).not.toMatch(/probe: 0 applied/);
});

test('the HTML report charts the stored counts; the flushed metrics, which a crash undercounts, are a table row that says so', () => {
  const html = htmlReport(smokeRunResults(verification()));

  expect(html).toContain(
    '<tr><th>effects applied</th><td>probe 2, probe-fifo 2 (inbox claims stored for the judged things&#39; events)</td></tr>',
  );
  expect(html).toContain(
    '<tr><th>metrics flushed</th><td>probe-fifo 2 of 2 applied, probe 0 of 2 applied; a crashed invocation flushes none</td></tr>',
  );
  expect(html).toContain('data-label="probe" data-value="2"');
  expect(html).not.toContain('data-label="probe metrics"');
});

test('metrics that count more commits than the inbox claims stored are a violation; fewer (a crash) are not', () => {
  const over = verification({ 'EffectApplied{consumer=probe-fifo}': 3, 'EffectApplied{consumer=probe}': 1 });

  // (The fixture judges no effects or provider log: only the metrics' violations are looked at here.)
  const metricsViolations = (v: ReturnType<typeof verification>) =>
    v.violations.filter((x) => x.invariant === 'metrics');
  expect(metricsViolations(over)).toEqual([
    { invariant: 'metrics', detail: expect.stringContaining('probe-fifo: EffectApplied counted 3 commits, but 2') },
  ]);
  expect(metricsViolations(verification())).toEqual([]);
});
