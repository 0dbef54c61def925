import type { PerformedEffect, ProviderLog } from '@exactly-once/tools/local-runtime/provider';
import {
  logOfEntities,
  providerCallItemsOf,
  providerLines,
  summarizeProviders,
} from '@exactly-once/tools/proof-kit/provider-calls';
import { checkPerformedEffects } from '@exactly-once/tools/proof-kit/verify';
import { PROBE_PROOF } from '../support/neutral-proof-domain';

/**
 * The proof kit's view of the local provider: what it performed, counted where it happened, the
 * invariants judged on it (each owed key once, nothing unowed, nothing without a key), and the one line
 * per provider a run prints; on the neutral fixture's domain (PROBE_PROOF, which adds no rule of its
 * own) and the probe consumers' providers, `probe` and `probe-fifo`.
 */
let seq = 0;
function effect(
  endpoint: 'probe' | 'probe-fifo',
  key: string,
  payload: Record<string, unknown> = {},
  answer: PerformedEffect['answer'] = 'sent',
): PerformedEffect {
  seq += 1;
  return {
    seq,
    endpoint,
    key,
    payload,
    performedAt: new Date(Date.UTC(2030, 0, 1, 0, 0, seq)).toISOString(),
    id: `id-${seq}`,
    answer,
    traceparent: null,
  };
}
const counts = (requests: number, replayed = 0, inProgress = 0) => ({
  requests,
  performed: requests - replayed - inProgress,
  replayed,
  inProgress,
  payloadMismatch: 0,
  chaosRefused: 0,
});
function logOf(
  performed: PerformedEffect[],
  keys: ProviderLog['keys'],
  keyless: ProviderLog['keyless'] = [],
): ProviderLog {
  return { performed, keyless, keys, counters: {} as ProviderLog['counters'], chaos: {} };
}

beforeEach(() => (seq = 0));

test('the provider lines: performed per entity, duplicates, answers lost, calls the key absorbed', () => {
  const log = logOf(
    [
      effect('probe', 'probe:t1.happened', {}, 'dropped'),
      effect('probe', 'probe:t2.happened'),
      effect('probe-fifo', 'probe-fifo:t1.happened'),
      effect('probe-fifo', 'probe-fifo:t1.undone'),
      effect('probe-fifo', 'probe-fifo:t1.undone'),
    ],
    {
      probe: { 'probe:t1.happened': counts(3, 2), 'probe:t2.happened': counts(2, 0, 1) },
      'probe-fifo': { 'probe-fifo:t1.happened': counts(1), 'probe-fifo:t1.undone': counts(2) },
    },
  );

  const lines = providerLines(summarizeProviders(log), 2, PROBE_PROOF);

  expect(lines).toEqual([
    'provider probe: 2 performed for 2 entities, 0 duplicates (keyed); 1 answers lost, 3 retried calls absorbed by the key',
    'provider probe-fifo: 3 performed for 2 entities, 1 duplicates (keyed); 0 answers lost, 0 retried calls absorbed by the key',
  ]);
});

test('a key performed twice is a duplicate of its provider', () => {
  const log = logOf([effect('probe', 'probe:t1.happened'), effect('probe', 'probe:t1.happened')], {
    probe: { 'probe:t1.happened': counts(2) },
  });

  const [probe] = summarizeProviders(log);

  expect(probe.duplicates).toBe(1);
});

test('each owed key performed exactly once at the provider passes', () => {
  const performed = [effect('probe', 'probe:t1.happened'), effect('probe-fifo', 'probe-fifo:t1.happened')];

  expect(
    checkPerformedEffects(
      performed,
      new Set(['probe:t1.happened', 'probe-fifo:t1.happened']),
      new Set(),
      [],
      PROBE_PROOF,
    ),
  ).toEqual([]);
});

test.each([
  [
    'performed twice',
    [effect('probe', 'k:t1.happened'), effect('probe', 'k:t1.happened')],
    ['k:t1.happened'],
    [],
    /k:t1\.happened performed 2 times at the provider, not once/,
  ],
  ['never performed', [], ['k:t1.happened'], [], /k:t1\.happened performed 0 times at the provider, not once/],
  [
    'performed though nothing owes it (an entity never accepted)',
    [effect('probe', 'k:t9.happened')],
    [],
    [],
    /k:t9\.happened performed 1 times, but nothing owes it/,
  ],
  [
    'an optional key performed twice',
    [effect('probe', 'k:t1.happened'), effect('probe', 'k:t1.happened')],
    [],
    ['k:t1.happened'],
    /at most once allowed/,
  ],
])('a key %s is a provider-effects violation', (_what, performed, owed, optional, message) => {
  const violations = checkPerformedEffects(performed, new Set(owed), new Set(optional), [], PROBE_PROOF);

  expect(violations).toEqual([
    expect.objectContaining({ invariant: 'provider-effects', detail: expect.stringMatching(message) }),
  ]);
});

test('an optional key performed once or not at all passes', () => {
  expect(
    checkPerformedEffects(
      [effect('probe', 'k:t1.happened')],
      new Set(),
      new Set(['k:t1.happened', 'k:t2.happened']),
      [],
      PROBE_PROOF,
    ),
  ).toEqual([]);
});

test('the run sees only its entities in the log, and each key as one item with its calls and performance times', () => {
  const log = logOf([effect('probe', 'probe:t1.happened'), effect('probe', 'probe:other.happened')], {
    probe: { 'probe:t1.happened': counts(2, 1), 'probe:other.happened': counts(1) },
    'probe-fifo': {},
  });

  const items = providerCallItemsOf(logOfEntities(log, new Set(['t1']), PROBE_PROOF));

  expect(items).toEqual([
    {
      idempotencyKey: 'probe:t1.happened',
      calls: 2,
      firstCalledAt: '2030-01-01T00:00:01.000Z',
      lastCalledAt: '2030-01-01T00:00:01.000Z',
    },
  ]);
});

test('a keyless provider: a repeat is the residue, counted in its line, not a violation; a key never performed still is', () => {
  const performed = [effect('probe', 'probe:t1.happened'), effect('probe', 'probe:t1.happened')];
  const log = logOf(performed, { probe: { 'probe:t1.happened': counts(2) }, 'probe-fifo': {} }, ['probe']);

  const owed = new Set(['probe:t1.happened', 'probe:t2.happened']);
  const violations = checkPerformedEffects(performed, owed, new Set(), ['probe'], PROBE_PROOF);
  const [line] = providerLines(summarizeProviders(log), 2, PROBE_PROOF);

  expect(violations.map((v) => v.detail)).toEqual([
    'key probe:t2.happened performed 0 times at the provider, not once',
  ]);
  expect(line).toMatch(/^provider probe: 2 performed for 2 entities, 1 duplicates \(keyless\); /);
});

test('an effect sent without a key: a violation on a keyed provider, kept with its entity by the payload, none on a keyless one', () => {
  const unkeyed = { ...effect('probe', 'x', { entityId: 't1' }), key: null };
  const other = { ...effect('probe', 'x', { entityId: 't9' }), key: null };
  const log = logOf([unkeyed, other], { probe: {}, 'probe-fifo': {} });

  const ours = logOfEntities(log, new Set(['t1']), PROBE_PROOF);
  const keyed = checkPerformedEffects(ours.performed, new Set(), new Set(), [], PROBE_PROOF);
  const keyless = checkPerformedEffects(ours.performed, new Set(), new Set(), ['probe'], PROBE_PROOF);

  expect(ours.performed).toEqual([unkeyed]);
  expect(keyed).toEqual([
    { invariant: 'provider-effects', detail: 'probe: 1 effect(s) performed without an Idempotency-Key' },
  ]);
  expect(keyless).toEqual([]);
});
