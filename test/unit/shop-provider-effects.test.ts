import { picksAfterCancel } from '../../tooling/shop/proof';
import type { PerformedEffect, ProviderLog } from '../../tools/local-runtime/provider';
import { providerLines, summarizeProviders } from '../../tools/proof-kit/provider-calls';
import { checkPerformedEffects } from '../../tools/proof-kit/verify';

/**
 * The shop's rules on what its providers performed, as the proof kit applies them: no PICK performed
 * after its order's CANCEL_PICK, and the warehouse's and the mail's lines in a run's report. The kit's
 * own view of the provider is tested on the neutral fixture (provider-effects.test.ts).
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

test('a PICK performed after its order’s CANCEL_PICK is a provider-order violation', () => {
  const performed = [
    effect('warehouse', 'f:o1.cancelled', { instruction: 'CANCEL_PICK', orderId: 'o1' }),
    effect('warehouse', 'f:o1.placed', { instruction: 'PICK', orderId: 'o1' }),
  ];

  const violations = checkPerformedEffects(performed, new Set(['f:o1.cancelled', 'f:o1.placed']), new Set());

  expect(violations).toEqual([expect.objectContaining({ invariant: 'provider-order' })]);
});
