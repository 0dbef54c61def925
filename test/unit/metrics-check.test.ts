import { consumeRecord } from '@exactly-once/runtime/consumer/consume-record';
import { parseEnvelope } from '@exactly-once/runtime/envelope';
import { metrics } from '@exactly-once/runtime/runtime/observability';
import { appliedMetricViolations, judgeAppliedMetrics } from '@exactly-once/tools/proof-kit/metrics-check';
import { recordWork } from '../support/record-work';
import { CONSUMER, memoryEntityConsumer, recordOf, thing } from '../support/memory-entity-consumer';

/**
 * The proof kit's check of the consumers' metrics: `EffectApplied` may fall short of the stored inbox
 * claims (a crashed invocation flushes none), never exceed them; and under a provider outage (part of
 * `--faults all`) it equals them, since each commit is counted in the try that made it.
 */

afterEach(() => jest.restoreAllMocks());

test('per consumer: equal, fewer (a crash) or more than the stored claims; only more is a violation', () => {
  const judged = judgeAppliedMetrics(
    {
      loyalty: { EffectApplied: 20, OwedProviderCallCompleted: 3 },
      fulfilment: { EffectApplied: 18 },
      audit: { EffectApplied: 7 },
    },
    { loyalty: 20, fulfilment: 20, audit: 6 },
  );

  expect(judged.map((j) => [j.consumer, j.verdict, j.owedCallsCompleted])).toEqual([
    ['loyalty', 'equal', 3],
    ['fulfilment', 'fewer (crashed invocations flush none)', 0],
    ['audit', 'MORE than stored', 0],
  ]);
  expect(appliedMetricViolations(judged)).toEqual([
    { invariant: 'metrics', detail: expect.stringContaining('audit: EffectApplied counted 7 commits, but 6') },
  ]);
});

test('a provider outage over the first tries, then redelivered copies: the flushed EffectApplied equals the stored claims, and the owed calls are counted apart from the duplicates', async () => {
  const c = memoryEntityConsumer();
  const counted: Record<string, number> = {};
  jest.spyOn(metrics, 'addMetric').mockImplementation((name) => {
    counted[name] = (counted[name] ?? 0) + 1;
    return metrics;
  });
  const events = ['a', 'b', 'c', 'd', 'e'].map((id) => thing(`thing-${id}`));
  const deliverAll = (round: string) =>
    Promise.all(
      events.map((event, i) =>
        consumeRecord(
          recordOf(JSON.stringify(event)),
          c.settings,
          parseEnvelope,
          c.apply,
          recordWork({ leaseHolder: `${round}-${i}` }).work,
        ).catch(() => 'failed'),
      ),
    );
  c.provider.failing = new Error('provider outage');
  await deliverAll('outage');
  c.provider.failing = undefined;

  await deliverAll('after-the-outage');
  await deliverAll('redriven-copies');

  const judged = judgeAppliedMetrics({ [CONSUMER]: counted }, { [CONSUMER]: events.length });
  expect(judged).toEqual([expect.objectContaining({ counted: 5, stored: 5, owedCallsCompleted: 5, verdict: 'equal' })]);
  expect(counted.DuplicateSuppressed).toBe(5);
  expect(c.provider.performed).toHaveLength(5);
});
