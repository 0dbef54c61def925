import { consumeRecord } from '@exactly-once/runtime/consumer/consume-record';
import { outcomeMetrics } from '@exactly-once/runtime/consumer/outcome-metrics';
import { parseEnvelope } from '@exactly-once/runtime/envelope';
import { metrics } from '@exactly-once/runtime/runtime/observability';
import { recordWork } from '../support/record-work';
import { memoryEntityConsumer, recordOf, thing } from '../support/memory-entity-consumer';

/**
 * The consumer metrics mean what they say: `EffectApplied` counts each event whose effect committed,
 * once, in the try that committed it (even when the provider call after it failed);
 * `OwedProviderCallCompleted` counts a provider call an earlier commit left owed, made by a later
 * copy; `DuplicateSuppressed` counts only copies of finished work.
 */

afterEach(() => jest.restoreAllMocks());

/** The metric names one call of `run` adds, without the ones every try counts (ReceiveCount). */
async function countedBy(run: () => Promise<unknown>): Promise<string[]> {
  const added: string[] = [];
  const spy = jest.spyOn(metrics, 'addMetric').mockImplementation((name) => {
    added.push(name);
    return metrics;
  });
  await run().catch(() => undefined);
  spy.mockRestore();
  return added.filter((name) => name !== 'ReceiveCount');
}

test('a provider outage after the commit: the committing try counts EffectApplied, the retry that makes the owed call counts OwedProviderCallCompleted, a later copy DuplicateSuppressed', async () => {
  const c = memoryEntityConsumer();
  const body = JSON.stringify(thing('thing-1'));
  const deliver = (holder: string) => () =>
    consumeRecord(recordOf(body), c.settings, parseEnvelope, c.apply, recordWork({ leaseHolder: holder }).work);
  c.provider.failing = new Error('provider down');

  const committed = await countedBy(deliver('try-1'));
  c.provider.failing = undefined;
  const owedCall = await countedBy(deliver('try-2'));
  const copy = await countedBy(deliver('try-3'));

  expect(committed.sort()).toEqual(['EffectApplied', 'TransientFailure']);
  expect(owedCall).toEqual(['OwedProviderCallCompleted']);
  expect(copy).toEqual(['DuplicateSuppressed']);
  expect(c.appliedCount('thing-1')).toBe(1);
});

test('a stale event counts StaleEventIgnored only', async () => {
  const c = memoryEntityConsumer();
  const newer = { ...thing('thing-2'), eventId: 'thing-2.v2', version: 2 };
  const older = { ...thing('thing-2'), eventId: 'thing-2.v1', version: 1 };
  await consumeRecord(recordOf(JSON.stringify(newer)), c.settings, parseEnvelope, c.apply, recordWork().work);

  const stale = await countedBy(() =>
    consumeRecord(recordOf(JSON.stringify(older)), c.settings, parseEnvelope, c.apply, recordWork().work),
  );

  expect(stale).toEqual(['StaleEventIgnored']);
});

describe('the rules, one per metric', () => {
  const none = { committed: false, owedCallCompleted: false };

  test.each([
    ['applied, its call made', 'applied', none, ['EffectApplied']],
    ['committed, then failed at the provider', 'failed', { ...none, committed: true }, ['EffectApplied']],
    [
      'a duplicate that made the owed call',
      'duplicate',
      { ...none, owedCallCompleted: true },
      ['OwedProviderCallCompleted'],
    ],
    ['a duplicate of finished work', 'duplicate', none, ['DuplicateSuppressed']],
    ['a duplicate whose owed call failed', 'failed', none, []],
    ['stale', 'stale', none, ['StaleEventIgnored']],
  ] as const)('%s: %s', (_what, end, tally, expected) => {
    expect(outcomeMetrics(end, tally)).toEqual(expected);
  });
});
