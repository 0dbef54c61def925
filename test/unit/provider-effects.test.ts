import { picksAfterCancel } from '../../tooling/shop/proof';
import type { PerformedEffect, ProviderLog } from '../../tools/local-runtime/provider';
import {
  logOfEntities,
  providerCallItemsOf,
  providerLines,
  summarizeProviders,
} from '../../tools/proof-kit/provider-calls';
import { checkPerformedEffects } from '../../tools/proof-kit/verify';

/**
 * The proof kit's view of the local provider: what it performed, counted where it happened, the
 * invariants judged on it (each owed key once, nothing unowed, no PICK after CANCEL_PICK), and the
 * one line per provider a run prints.
 */
let seq = 0;
function effect(
  endpoint: 'mail' | 'warehouse',
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

test('the provider lines: performed per placed order, duplicates, answers lost, calls the key absorbed, PICK after CANCEL_PICK', () => {
  const log = logOf(
    [
      effect('mail', 'loyalty:o1.placed', {}, 'dropped'),
      effect('mail', 'loyalty:o2.placed'),
      effect('warehouse', 'fulfilment:o1.placed', { instruction: 'PICK', orderId: 'o1' }),
      effect('warehouse', 'fulfilment:o1.cancelled', { instruction: 'CANCEL_PICK', orderId: 'o1' }),
      effect('warehouse', 'fulfilment:o2.placed', { instruction: 'PICK', orderId: 'o2' }),
    ],
    {
      mail: { 'loyalty:o1.placed': counts(3, 2), 'loyalty:o2.placed': counts(2, 0, 1) },
      warehouse: {
        'fulfilment:o1.placed': counts(1),
        'fulfilment:o1.cancelled': counts(1),
        'fulfilment:o2.placed': counts(1),
      },
    },
  );

  const lines = providerLines(summarizeProviders(log), 2);

  expect(lines).toEqual([
    'provider mail: 2 performed for 2 placed orders, 0 duplicates (keyed); 1 answers lost, 3 retried calls absorbed by the key',
    'provider warehouse: 3 performed (2 PICK, 1 CANCEL_PICK), 0 duplicates, 0 PICK after CANCEL_PICK',
  ]);
});

test('a key performed twice is a duplicate, and a PICK performed after its CANCEL_PICK is counted', () => {
  const log = logOf(
    [
      effect('mail', 'loyalty:o1.placed'),
      effect('mail', 'loyalty:o1.placed'),
      effect('warehouse', 'fulfilment:o1.cancelled', { instruction: 'CANCEL_PICK', orderId: 'o1' }),
      effect('warehouse', 'fulfilment:o1.placed', { instruction: 'PICK', orderId: 'o1' }),
    ],
    { mail: { 'loyalty:o1.placed': counts(2) }, warehouse: {} },
  );

  const [mail, warehouse] = summarizeProviders(log);

  expect(mail.duplicates).toBe(1);
  expect(picksAfterCancel(warehouse.effects)).toHaveLength(1);
});

test('each owed key performed exactly once at the provider passes', () => {
  const performed = [
    effect('mail', 'loyalty:o1.placed'),
    effect('warehouse', 'fulfilment:o1.placed', { instruction: 'PICK', orderId: 'o1' }),
  ];

  expect(checkPerformedEffects(performed, new Set(['loyalty:o1.placed', 'fulfilment:o1.placed']), new Set())).toEqual(
    [],
  );
});

test.each([
  [
    'performed twice',
    [effect('mail', 'k:o1.placed'), effect('mail', 'k:o1.placed')],
    ['k:o1.placed'],
    [],
    /k:o1\.placed performed 2 times at the provider, not once/,
  ],
  ['never performed', [], ['k:o1.placed'], [], /k:o1\.placed performed 0 times at the provider, not once/],
  [
    'performed though nothing owes it (an order never accepted)',
    [effect('mail', 'k:o9.placed')],
    [],
    [],
    /k:o9\.placed performed 1 times, but nothing owes it/,
  ],
  [
    'an optional key performed twice',
    [effect('mail', 'k:o1.placed'), effect('mail', 'k:o1.placed')],
    [],
    ['k:o1.placed'],
    /at most once allowed/,
  ],
])('a key %s is a provider-effects violation', (_what, performed, owed, optional, message) => {
  const violations = checkPerformedEffects(performed, new Set(owed), new Set(optional));

  expect(violations).toEqual([
    expect.objectContaining({ invariant: 'provider-effects', detail: expect.stringMatching(message) }),
  ]);
});

test('an optional key performed once or not at all passes', () => {
  expect(
    checkPerformedEffects([effect('mail', 'k:o1.placed')], new Set(), new Set(['k:o1.placed', 'k:o2.placed'])),
  ).toEqual([]);
});

test('a PICK performed after its order’s CANCEL_PICK is a provider-order violation', () => {
  const performed = [
    effect('warehouse', 'f:o1.cancelled', { instruction: 'CANCEL_PICK', orderId: 'o1' }),
    effect('warehouse', 'f:o1.placed', { instruction: 'PICK', orderId: 'o1' }),
  ];

  const violations = checkPerformedEffects(performed, new Set(['f:o1.cancelled', 'f:o1.placed']), new Set());

  expect(violations).toEqual([expect.objectContaining({ invariant: 'provider-order' })]);
});

test('the run sees only its orders in the log, and each key as one item with its calls and performance times', () => {
  const log = logOf([effect('mail', 'loyalty:o1.placed'), effect('mail', 'loyalty:other.placed')], {
    mail: { 'loyalty:o1.placed': counts(2, 1), 'loyalty:other.placed': counts(1) },
    warehouse: {},
  });

  const items = providerCallItemsOf(logOfEntities(log, new Set(['o1'])));

  expect(items).toEqual([
    {
      idempotencyKey: 'loyalty:o1.placed',
      calls: 2,
      firstCalledAt: '2030-01-01T00:00:01.000Z',
      lastCalledAt: '2030-01-01T00:00:01.000Z',
    },
  ]);
});

test('a keyless provider: a repeat is the residue, counted in its line, not a violation; a key never performed still is', () => {
  const performed = [effect('mail', 'loyalty:o1.placed'), effect('mail', 'loyalty:o1.placed')];
  const log = logOf(performed, { mail: { 'loyalty:o1.placed': counts(2) }, warehouse: {} }, ['mail']);

  const violations = checkPerformedEffects(performed, new Set(['loyalty:o1.placed', 'loyalty:o2.placed']), new Set(), [
    'mail',
  ]);
  const [line] = providerLines(summarizeProviders(log), 2);

  expect(violations.map((v) => v.detail)).toEqual([
    'key loyalty:o2.placed performed 0 times at the provider, not once',
  ]);
  expect(line).toMatch(/^provider mail: 2 performed for 2 placed orders, 1 duplicates \(keyless\); /);
});

test('an effect sent without a key: a violation on a keyed provider, kept with its order by the payload, none on a keyless one', () => {
  const unkeyed = { ...effect('mail', 'x', { orderId: 'o1' }), key: null };
  const other = { ...effect('mail', 'x', { orderId: 'o9' }), key: null };
  const log = logOf([unkeyed, other], { mail: {}, warehouse: {} });

  const ours = logOfEntities(log, new Set(['o1']));
  const keyed = checkPerformedEffects(ours.performed, new Set(), new Set());
  const keyless = checkPerformedEffects(ours.performed, new Set(), new Set(), ['mail']);

  expect(ours.performed).toEqual([unkeyed]);
  expect(keyed).toEqual([
    { invariant: 'provider-effects', detail: 'mail: 1 effect(s) performed without an Idempotency-Key' },
  ]);
  expect(keyless).toEqual([]);
});
