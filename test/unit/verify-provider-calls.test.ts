import { consumerSpec } from '../../lambdas/shop/consumers';
import { orderCancelledEventId, orderPlacedEventId } from '../../lambdas/shop/domain/order';
import { checkProviderCalls, producedEvents } from '../../tools/proof-kit/verify';
import { EXAMPLE_CONSUMERS, unusedConsumerName } from '../support/consumer-list';

/**
 * The proof kit's provider invariants on crafted tables: each check passes on
 * a clean record and fails on a record that breaks it, so the kit can fail.
 * The records hold the example consumers' claims and calls (fulfilment's PICK
 * and CANCEL_PICK, loyalty's call), so they are checked against those
 * consumers, whatever else the list holds.
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

test('a call that reached the provider but is not recorded done on the inbox is a provider violation', () => {
  const record = cancelledOrder();
  record.effects.set(...inbox('loyalty', PLACED, {}));

  expect(checkProviderCalls(record, EXAMPLE_CONSUMERS)).toEqual([
    {
      invariant: 'provider',
      detail: `key loyalty:${PLACED} reached the provider but the inbox does not record the call done`,
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

// --- Each event once per consumer: the generic invariant, for a consumer no code of the kit names. ---
describe('each event once per consumer, with a third consumer on the list', () => {
  // Takes OrderPlaced only, so a key under OrderCancelled is one it never owes.
  // Named like no consumer on the list.
  const AUDIT = unusedConsumerName('audit');
  const audit = { ...consumerSpec('loyalty'), name: AUDIT, eventTypes: ['OrderPlaced'] };
  const consumers = [...EXAMPLE_CONSUMERS, audit];

  /** The clean cancelled order, with the third consumer's claim and its one call. */
  function withAudit() {
    const record = cancelledOrder();
    record.effects.set(...inbox(AUDIT, PLACED));
    record.providerItems.push(call(`${AUDIT}:${PLACED}`, '2030-01-01T00:00:02.000Z'));
    return record;
  }

  test('its claim and one provider call per event it takes: no violation', () => {
    expect(checkProviderCalls(withAudit(), consumers)).toEqual([]);
  });

  test('an event it takes with no inbox claim is reported: never applied, or applied without its claim', () => {
    const record = withAudit();
    record.effects.delete(`INBOX#${AUDIT}#${PLACED}`);

    expect(checkProviderCalls(record, consumers)).toEqual([
      {
        invariant: 'each-event-once-per-consumer',
        detail: `${AUDIT}: OrderPlaced ${PLACED} has no inbox claim INBOX#${AUDIT}#${PLACED}: never applied, or applied without its claim`,
      },
    ]);
  });

  test('its provider called twice with no claim to deduplicate is a double effect', () => {
    const record = withAudit();
    record.effects.delete(`INBOX#${AUDIT}#${PLACED}`);
    record.providerItems[3] = call(`${AUDIT}:${PLACED}`, '2030-01-01T00:00:02.000Z', '2030-01-01T00:00:03.000Z');

    expect(checkProviderCalls(record, consumers)).toContainEqual({
      invariant: 'each-event-once-per-consumer',
      detail: `key ${AUDIT}:${PLACED} called 2 times with no inbox claim to deduplicate: a double effect`,
    });
  });

  test('a repeat under its key with the claim in place is the owed call retried, which the key makes harmless', () => {
    const record = withAudit();
    record.providerItems[3] = call(`${AUDIT}:${PLACED}`, '2030-01-01T00:00:02.000Z', '2030-01-01T00:00:03.000Z');

    expect(checkProviderCalls(record, consumers)).toEqual([]);
  });

  test('an event it takes that never reached its provider is reported under its key', () => {
    const record = withAudit();
    record.providerItems.pop();

    expect(checkProviderCalls(record, consumers)).toEqual([
      { invariant: 'provider', detail: `no provider call under key ${AUDIT}:${PLACED}` },
    ]);
  });

  test('an event it found stale (its entry superseded by a later event of its entity) owes no call; with no entry at all it is reported', () => {
    const stale = withAudit();
    stale.effects.set(...inbox(AUDIT, PLACED, { supersededBy: CANCELLED }));
    stale.providerItems.pop();
    const lost = withAudit();
    lost.effects.delete(`INBOX#${AUDIT}#${PLACED}`);
    lost.providerItems.pop();

    expect(checkProviderCalls(stale, consumers)).toEqual([]);
    expect(checkProviderCalls(lost, consumers)).toEqual([
      {
        invariant: 'each-event-once-per-consumer',
        detail: `${AUDIT}: OrderPlaced ${PLACED} has no inbox claim INBOX#${AUDIT}#${PLACED}: never applied, or applied without its claim`,
      },
      { invariant: 'provider', detail: `no provider call under key ${AUDIT}:${PLACED}` },
    ]);
  });

  test('a key for an event type its spec does not take, or for a consumer not on the list, is unexpected', () => {
    const record = withAudit();
    record.providerItems.push(call(`${AUDIT}:${CANCELLED}`, '2030-01-01T00:00:06.000Z'));

    expect(checkProviderCalls(record, consumers)).toEqual([
      { invariant: 'provider', detail: `unexpected provider call under key ${AUDIT}:${CANCELLED}` },
    ]);
    expect(checkProviderCalls(withAudit(), EXAMPLE_CONSUMERS)).toEqual([
      { invariant: 'provider', detail: `unexpected provider call under key ${AUDIT}:${PLACED}` },
    ]);
  });
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
