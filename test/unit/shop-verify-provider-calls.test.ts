import { orderCancelledEventId, orderPlacedEventId } from '../../lambdas/shop/domain/order';
import { checkProviderCalls, producedEvents } from '../../tools/proof-kit/verify';
import { EXAMPLE_CONSUMERS } from '../support/consumer-list';

/**
 * The shop's provider rules in the proof kit, on crafted tables: no PICK after its order's CANCEL_PICK,
 * a superseded OrderPlaced owes no PICK, and the events an order produced. The records hold the example
 * consumers' claims and calls (fulfilment's PICK and CANCEL_PICK, loyalty's call), so they are checked
 * against those consumers, whatever else the list holds. The kit's generic provider invariants are
 * tested on the neutral fixture (verify-provider-calls.test.ts).
 */

const ORDER = 'ord-1';
const PLACED = orderPlacedEventId(ORDER);
const CANCELLED = orderCancelledEventId(ORDER);
const DONE = { providerCallDoneAt: '2030-01-01T00:00:09.000Z' };

function inbox(
  consumer: string,
  eventId: string,
  extra: Record<string, unknown> = DONE,
): [string, Record<string, unknown>] {
  return [`INBOX#${consumer}#${eventId}`, { pk: `INBOX#${consumer}#${eventId}`, ...extra }];
}

function call(idempotencyKey: string, firstCalledAt: string, lastCalledAt = firstCalledAt): Record<string, unknown> {
  return { idempotencyKey, calls: firstCalledAt === lastCalledAt ? 1 : 2, firstCalledAt, lastCalledAt };
}

/** A cancelled order whose PICK and CANCEL_PICK both reached the warehouse, in that order. */
function cancelledOrder() {
  return {
    entities: [{ orderId: ORDER, status: 'CANCELLED' }],
    effects: new Map([
      [`FULFILMENT#${ORDER}`, { state: 'RELEASED', version: 2 }],
      inbox('loyalty', PLACED),
      inbox('fulfilment', PLACED, { ...DONE, supersededBy: CANCELLED }),
      inbox('fulfilment', CANCELLED),
    ]),
    providerItems: [
      call(`loyalty:${PLACED}`, '2030-01-01T00:00:01.000Z'),
      call(`fulfilment:${PLACED}`, '2030-01-01T00:00:01.000Z'),
      call(`fulfilment:${CANCELLED}`, '2030-01-01T00:00:05.000Z'),
    ],
  };
}

test('a clean record: PICK before CANCEL_PICK, every call recorded done: no violation', () => {
  expect(checkProviderCalls(cancelledOrder(), EXAMPLE_CONSUMERS)).toEqual([]);
});

test('a PICK made after the CANCEL_PICK reached the warehouse is a provider-order violation', () => {
  const record = cancelledOrder();
  // The PICK's key was called again (a late redrive) after the cancel went out.
  record.providerItems[1] = call(`fulfilment:${PLACED}`, '2030-01-01T00:00:01.000Z', '2030-01-01T00:00:06.000Z');

  const violations = checkProviderCalls(record, EXAMPLE_CONSUMERS);

  expect(violations).toEqual([
    {
      invariant: 'provider-order',
      detail: expect.stringContaining(
        `fulfilment:${PLACED} called at 2030-01-01T00:00:06.000Z, after fulfilment:${CANCELLED}`,
      ),
    },
  ]);
});

test('a placed order without its PICK is a violation; a cancelled one whose place was superseded before its PICK is not', () => {
  const superseded = cancelledOrder();
  superseded.effects.set(...inbox('fulfilment', PLACED, { supersededBy: CANCELLED }));
  superseded.providerItems.splice(1, 1);
  const placedOnly = {
    entities: [{ orderId: ORDER, status: 'PLACED' }],
    // Reserved (its claim is there), but the PICK never reached the warehouse.
    effects: new Map([
      [`FULFILMENT#${ORDER}`, { state: 'RESERVED', version: 1 }],
      inbox('loyalty', PLACED),
      inbox('fulfilment', PLACED, {}),
    ]),
    providerItems: [call(`loyalty:${PLACED}`, '2030-01-01T00:00:01.000Z')],
  };

  expect(checkProviderCalls(superseded, EXAMPLE_CONSUMERS)).toEqual([]);
  expect(checkProviderCalls(placedOnly, EXAMPLE_CONSUMERS)).toEqual([
    { invariant: 'provider', detail: `no provider call under key fulfilment:${PLACED}` },
  ]);
});

test('a key no event of the order owes (a CANCEL_PICK for an order still placed) is a violation', () => {
  const record = cancelledOrder();
  record.entities[0].status = 'PLACED';
  record.effects.set(`FULFILMENT#${ORDER}`, { state: 'RESERVED', version: 1 });
  record.effects.set(...inbox('fulfilment', PLACED));

  expect(checkProviderCalls(record, EXAMPLE_CONSUMERS)).toEqual([
    { invariant: 'provider', detail: `unexpected provider call under key fulfilment:${CANCELLED}` },
  ]);
});

test('the produced events: OrderPlaced for every order, OrderCancelled for a cancelled one, keyed by the order', () => {
  expect(
    producedEvents([
      { orderId: 'a', status: 'PLACED' },
      { orderId: 'b', status: 'CANCELLED' },
    ]),
  ).toEqual([
    { eventId: orderPlacedEventId('a'), type: 'OrderPlaced', entityId: 'a' },
    { eventId: orderPlacedEventId('b'), type: 'OrderPlaced', entityId: 'b' },
    { eventId: orderCancelledEventId('b'), type: 'OrderCancelled', entityId: 'b' },
  ]);
});
