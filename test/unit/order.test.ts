import {
  deriveOrderId,
  loyaltyPoints,
  MAX_BODY_BYTES,
  MAX_ITEMS,
  orderCancelledEventId,
  orderPlacedEventId,
  orderTotalCents,
  parsePlaceOrderBody,
  type FieldError,
} from '../../lambdas/shop/domain/order';
import { orderIdParam } from '../../lambdas/shop/api/order-request';
import { apiEvent, VALID_ORDER } from '../support/api-events';

/** The order domain: body validation (the limits of docs/http-api.md), deterministic ids, totals. */

const line = (i: number) => ({ sku: `sku-${i}`, quantity: 1, unitPriceCents: 100 });

function errorsOf(body: string | null | undefined): FieldError[] {
  const result = parsePlaceOrderBody(body);
  if (result.ok) throw new Error(`expected a validation failure for ${String(body).slice(0, 80)}`);
  return result.errors;
}

function fieldsOf(body: unknown): string[] {
  return errorsOf(JSON.stringify(body)).map((e) => e.field);
}

describe('parsePlaceOrderBody', () => {
  test('a valid body parses to the request', () => {
    const result = parsePlaceOrderBody(JSON.stringify(VALID_ORDER));

    expect(result).toEqual({ ok: true, value: VALID_ORDER });
  });

  test.each([
    ['null', null],
    ['undefined', undefined],
    ['empty', ''],
  ])('a %s body is refused', (_name, body) => {
    expect(errorsOf(body)).toEqual([{ field: '(body)', message: expect.stringContaining('required') }]);
  });

  test.each([
    ['truncated', '{"customerId":"c","items":['],
    ['not JSON at all', 'customerId=c'],
    ['trailing garbage', '{"customerId":"c","items":[]}x'],
  ])('invalid JSON (%s) is refused as such', (_name, body) => {
    expect(errorsOf(body)).toEqual([{ field: '(body)', message: expect.stringContaining('not valid JSON') }]);
  });

  test.each([
    ['an array', []],
    ['a string', 'order'],
    ['null', null],
  ])('JSON that is %s is refused', (_name, json) => {
    expect(fieldsOf(json)).toContain('(body)');
  });

  describe('the 64 KiB limit counts bytes', () => {
    /** A valid body padded with whitespace to exactly `bytes` bytes. */
    const padded = (bytes: number) => {
      const json = JSON.stringify(VALID_ORDER);
      return json.slice(0, -1) + ' '.repeat(bytes - Buffer.byteLength(json)) + '}';
    };

    test('exactly 64 KiB is accepted', () => {
      const body = padded(MAX_BODY_BYTES);

      expect(Buffer.byteLength(body)).toBe(64 * 1024);
      expect(parsePlaceOrderBody(body).ok).toBe(true);
    });

    test('one byte more is refused before parsing', () => {
      expect(errorsOf(padded(MAX_BODY_BYTES + 1))).toEqual([
        { field: '(body)', message: expect.stringContaining('65536') },
      ]);
    });

    test('multi-byte characters count as their UTF-8 bytes, not as characters', () => {
      // 33,000 characters but 66,000 bytes of customer id: over the limit in bytes only.
      const body = JSON.stringify({ ...VALID_ORDER, customerId: 'é'.repeat(33_000) });

      expect(body.length).toBeLessThan(MAX_BODY_BYTES);
      expect(errorsOf(body)[0].field).toBe('(body)');
    });
  });

  test(`${MAX_ITEMS} items are accepted, ${MAX_ITEMS + 1} are refused on "items"`, () => {
    const fifty = { customerId: 'c', items: Array.from({ length: 50 }, (_, i) => line(i)) };
    const fiftyOne = { customerId: 'c', items: Array.from({ length: 51 }, (_, i) => line(i)) };

    expect(parsePlaceOrderBody(JSON.stringify(fifty)).ok).toBe(true);
    expect(fieldsOf(fiftyOne)).toEqual(['items']);
  });

  test('no items is refused', () => {
    expect(fieldsOf({ customerId: 'c', items: [] })).toEqual(['items']);
  });

  test('field errors carry the path of every bad field', () => {
    const body = {
      customerId: '',
      items: [
        { sku: 'ok', quantity: 1.5, unitPriceCents: 10 },
        { sku: '', quantity: 0, unitPriceCents: -1 },
      ],
    };

    const errors = errorsOf(JSON.stringify(body));

    expect(errors.map((e) => e.field).sort()).toEqual(
      ['customerId', 'items.0.quantity', 'items.1.quantity', 'items.1.sku', 'items.1.unitPriceCents'].sort(),
    );
    for (const error of errors) expect(error.message).toMatch(/\S/);
  });

  test.each([
    ['a missing customerId', { items: [line(1)] }, 'customerId'],
    ['a numeric customerId', { customerId: 7, items: [line(1)] }, 'customerId'],
    [
      'a string quantity',
      { customerId: 'c', items: [{ sku: 's', quantity: '1', unitPriceCents: 1 }] },
      'items.0.quantity',
    ],
    ['a missing unit price', { customerId: 'c', items: [{ sku: 's', quantity: 1 }] }, 'items.0.unitPriceCents'],
  ])('%s is refused on its field', (_name, body, field) => {
    expect(fieldsOf(body)).toEqual([field]);
  });

  describe('customerId and sku: 1-64 ASCII letters, digits and . _ : -', () => {
    const body = (customerId: string, sku = 'sku-1') => ({
      customerId,
      items: [{ sku, quantity: 1, unitPriceCents: 1 }],
    });

    test.each([
      ['every allowed character class', 'AZaz09._:-'],
      ['one character', 'x'],
      ['64 characters', 'x'.repeat(64)],
      ['a Cognito-style id', 'us-east-1:3f2a1b4c-5d6e-4f70-8a9b-0c1d2e3f4a5b'],
    ])('%s is accepted for both', (_name, id) => {
      expect(parsePlaceOrderBody(JSON.stringify(body(id, id))).ok).toBe(true);
    });

    test.each([
      ['U+FFFE (SQS refuses it)', 'a\uFFFE'],
      ['U+FFFF (SQS refuses it)', 'a\uFFFF'],
      ['a space', 'a b'],
      ['a slash', 'a/b'],
      ['a non-ASCII letter', 'caf\u00e9'],
      ['a control character', 'a\u0000'],
      ['65 characters', 'x'.repeat(65)],
      ['an empty id', ''],
    ])('%s is refused on the field, with one message', (_name, id) => {
      expect(errorsOf(JSON.stringify(body(id)))).toEqual([
        { field: 'customerId', message: expect.stringMatching(/\S/) },
      ]);
      expect(errorsOf(JSON.stringify(body('c', id)))).toEqual([
        { field: 'items.0.sku', message: expect.stringMatching(/\S/) },
      ]);
    });
  });

  test('unknown fields are refused (at the top and in a line), not silently dropped', () => {
    expect(errorsOf(JSON.stringify({ ...VALID_ORDER, coupon: 'FREE' }))[0].message).toContain('coupon');
    expect(fieldsOf({ customerId: 'c', items: [{ ...line(1), discount: 5 }] })).toEqual(['items.0']);
  });
});

describe('deriveOrderId', () => {
  const alice = 'arn:aws:iam::123456789012:user/alice';
  const bob = 'arn:aws:iam::123456789012:user/bob';

  test('is deterministic', () => {
    expect(deriveOrderId(alice, 'key-1')).toBe(deriveOrderId(alice, 'key-1'));
  });

  test('is scoped to the caller: the same key from two callers is two orders', () => {
    expect(deriveOrderId(alice, 'key-1')).not.toBe(deriveOrderId(bob, 'key-1'));
  });

  test('differs per key', () => {
    expect(deriveOrderId(alice, 'key-1')).not.toBe(deriveOrderId(alice, 'key-2'));
  });

  test('caller and key cannot run into each other', () => {
    expect(deriveOrderId('ab', 'c')).not.toBe(deriveOrderId('a', 'bc'));
  });

  test('has the public shape the read and cancel routes accept', () => {
    const orderId = deriveOrderId(alice, 'key-1');
    const event = apiEvent({ method: 'GET', path: `/orders/${orderId}`, pathParameters: { orderId } });

    expect(orderId).toMatch(/^ord_[0-9a-f]{32}$/);
    expect(orderIdParam(event)).toEqual({ ok: true, orderId });
  });
});

describe('totals and event ids', () => {
  test('the total is the sum of quantity x unit price', () => {
    expect(orderTotalCents(VALID_ORDER.items)).toBe(2 * 150 + 1 * 999);
    expect(orderTotalCents([{ sku: 'a', quantity: 3, unitPriceCents: 0 }])).toBe(0);
    expect(orderTotalCents([])).toBe(0);
  });

  test('loyalty points are whole currency units, rounded down', () => {
    expect(loyaltyPoints(1299)).toBe(12);
    expect(loyaltyPoints(99)).toBe(0);
  });

  test('event ids are deterministic and distinct per event type', () => {
    const orderId = deriveOrderId('caller', 'key');

    expect(orderPlacedEventId(orderId)).toBe(orderPlacedEventId(orderId));
    expect(orderCancelledEventId(orderId)).toBe(orderCancelledEventId(orderId));
    expect(orderPlacedEventId(orderId)).not.toBe(orderCancelledEventId(orderId));
    expect(orderPlacedEventId(orderId)).toContain(orderId);
  });
});
