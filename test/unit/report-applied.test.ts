import { inboxKey, SUPERSEDED_BY_ATTRIBUTE } from '../../lambdas/exactly-once/aws/inbox-table';
import { deriveOrderId, orderCancelledEventId, orderPlacedEventId } from '../../lambdas/shop/domain/order';
import { htmlReport, terminalSummary } from '../../tools/proof-kit/report';
import type { OrderItem } from '../../tooling/shop/proof';
import { checkInvariants } from '../../tools/proof-kit/verify';
import { smokeRunResults } from '../support/run-results';

/**
 * The report's "applied" counts come from what was stored (the inbox claims),
 * not from the consumers' metrics, which a crashed invocation never flushes:
 * a run under the crash fault must not say "0 applied" next to a PASS.
 */
const CALLER = 'arn:aws:iam::000000000000:user/AKIAREPORT0001';
const placed = deriveOrderId(CALLER, 'k1');
const cancelled = deriveOrderId(CALLER, 'k2');
const orders: OrderItem[] = [
  {
    orderId: placed,
    status: 'PLACED',
    caller: CALLER,
    customerId: 'lt-c1',
    items: [{ sku: 'lt-s1', quantity: 1, unitPriceCents: 100 }],
    totalCents: 100,
  },
  {
    orderId: cancelled,
    status: 'CANCELLED',
    caller: CALLER,
    customerId: 'lt-c1',
    items: [{ sku: 'lt-s1', quantity: 1, unitPriceCents: 100 }],
    totalCents: 100,
  },
];
const claim = (consumer: string, eventId: string) => ({
  ...inboxKey(consumer, eventId, CALLER),
  consumer,
  eventId,
  claimedAt: '2026-01-01T00:00:00.000Z',
});

/** Every event claimed by its consumers, while the metrics saw loyalty apply nothing (its invocations crashed). */
function verification() {
  return checkInvariants({
    runId: 'lt',
    checkIntents: false,
    plan: [],
    observations: [],
    entityIdOf: deriveOrderId,
    isPoison: () => false,
    pendingOutbox: 0,
    metrics: {
      'EffectApplied{consumer=fulfilment}': 2,
      'DuplicateSuppressed{consumer=fulfilment}': 1,
      'DuplicateSuppressed{consumer=loyalty}': 5,
    },
    entities: orders,
    effectItems: [
      claim('fulfilment', orderPlacedEventId(placed)),
      // The cancelled order's place was superseded before it was applied: an entry, but no claim.
      { ...inboxKey('fulfilment', orderPlacedEventId(cancelled), CALLER), [SUPERSEDED_BY_ATTRIBUTE]: 'x' },
      claim('fulfilment', orderCancelledEventId(cancelled)),
      claim('loyalty', orderPlacedEventId(placed)),
      claim('loyalty', orderPlacedEventId(cancelled)),
    ],
    providerItems: [],
    deadLetterQueues: [],
  });
}

test('applied effects are counted from the stored inbox claims, not from the metrics; a superseded-only entry is no claim', () => {
  const counted = verification();

  expect(counted.appliedEffects).toEqual({ fulfilment: 2, loyalty: 2 });
  expect(counted.consumerMetrics.loyalty?.EffectApplied).toBeUndefined();
});

test('the terminal summary states the stored counts and how much of them the flushed metrics saw', () => {
  const summary = terminalSummary(smokeRunResults(verification()));

  expect(summary).toContain(
    "applied         fulfilment 2, loyalty 2 (inbox claims stored for the judged orders' events)",
  );
  expect(summary).toContain('metrics flushed (a crashed invocation flushes none): fulfilment: 2 of 2 applied');
  expect(summary).toContain('loyalty: 0 of 2 applied, 5 duplicates suppressed');
  expect(summary).not.toMatch(/loyalty: 0 applied/);
});

test('the HTML report charts the stored counts; the flushed metrics, which a crash undercounts, are a table row that says so', () => {
  const html = htmlReport(smokeRunResults(verification()));

  expect(html).toContain(
    '<tr><th>effects applied</th><td>fulfilment 2, loyalty 2 (inbox claims stored for the judged orders&#39; events)</td></tr>',
  );
  expect(html).toContain(
    '<tr><th>metrics flushed</th><td>fulfilment 2 of 2 applied, loyalty 0 of 2 applied; a crashed invocation flushes none</td></tr>',
  );
  expect(html).toContain('data-label="loyalty" data-value="2"');
  expect(html).not.toContain('data-label="loyalty metrics"');
});
