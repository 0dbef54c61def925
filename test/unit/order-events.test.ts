import { PermanentError } from '../../lambdas/exactly-once/errors';
import { parseOrderEvent, type OrderCancelledEvent, type OrderPlacedEvent } from '../../lambdas/shop/domain/events';

/** The shop's event schema: what its consumers accept as an OrderPlaced or an OrderCancelled. */

describe('parseOrderEvent', () => {
  const placedEvent: OrderPlacedEvent = {
    eventId: 'ord_1.placed',
    type: 'OrderPlaced',
    entityId: 'ord_1',
    version: 1,
    occurredAt: '2030-01-02T03:04:05.000Z',
    payload: {
      customerId: 'cust-1',
      items: [{ sku: 'SKU-A', quantity: 2, unitPriceCents: 500 }],
      totalCents: 1_000,
    },
  };
  const cancelledEvent: OrderCancelledEvent = {
    eventId: 'ord_1.cancelled',
    type: 'OrderCancelled',
    entityId: 'ord_1',
    version: 2,
    occurredAt: '2030-01-02T04:00:00.000Z',
    payload: { customerId: 'cust-1', items: placedEvent.payload.items },
  };
  /** The placed event with some payload fields replaced. */
  const placedWith = (payload: Record<string, unknown>) => ({
    ...placedEvent,
    payload: { ...placedEvent.payload, ...payload },
  });

  function permanentErrorOf(body: string): PermanentError {
    try {
      parseOrderEvent(body);
    } catch (error) {
      if (error instanceof PermanentError) return error;
      throw error;
    }
    throw new Error(`parsed: ${body}`);
  }

  test.each([
    ['OrderPlaced', placedEvent],
    ['OrderCancelled', cancelledEvent],
  ])('reads an %s', (_type, event) => {
    expect(parseOrderEvent(JSON.stringify(event))).toEqual(event);
  });

  test('drops fields it does not know', () => {
    expect(parseOrderEvent(JSON.stringify({ ...placedEvent, injected: 'x' }))).toEqual(placedEvent);
  });

  test.each(['', 'not json', '{"eventId":', 'null', '42', '"OrderPlaced"', '[]'])(
    '%j is a SchemaViolation (permanent, not retried)',
    (body) => {
      expect(permanentErrorOf(body).permanentCause).toBe('SchemaViolation');
    },
  );

  test.each([
    ['no eventId', { ...placedEvent, eventId: undefined }, 'eventId'],
    ['an empty eventId', { ...placedEvent, eventId: '' }, 'eventId'],
    ['an unknown type', { ...placedEvent, type: 'OrderShipped' }, 'type'],
    ['OrderPlaced at version 2', { ...placedEvent, version: 2 }, 'version'],
    ['OrderCancelled at version 1', { ...cancelledEvent, version: 1 }, 'version'],
    ['no items', placedWith({ items: [] }), 'items'],
    ['a quantity of 0', placedWith({ items: [{ sku: 'S', quantity: 0, unitPriceCents: 1 }] }), 'items.0.quantity'],
    [
      'a fractional quantity',
      placedWith({ items: [{ sku: 'S', quantity: 1.5, unitPriceCents: 1 }] }),
      'items.0.quantity',
    ],
    ['an empty sku', placedWith({ items: [{ sku: '', quantity: 1, unitPriceCents: 1 }] }), 'items.0.sku'],
    ['a negative total', placedWith({ totalCents: -1 }), 'totalCents'],
    ['an OrderPlaced without total', placedWith({ totalCents: undefined }), 'totalCents'],
    ['no entityId', { ...cancelledEvent, entityId: undefined }, 'entityId'],
    ['no customerId', placedWith({ customerId: undefined }), 'customerId'],
    ['no payload', { ...placedEvent, payload: undefined }, 'payload'],
  ])('an event with %s is a SchemaViolation naming the field', (_what, body, field) => {
    const error = permanentErrorOf(JSON.stringify(body));

    expect(error.permanentCause).toBe('SchemaViolation');
    expect(error.message).toContain(field);
  });
});
