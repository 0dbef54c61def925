import { canonicalJson } from '@exactly-once/runtime/api';

/** The payload fingerprint: whitespace and key order must not make a retry look like a different request. */

test('key order does not matter, at any depth', () => {
  const a = {
    customerId: 'c',
    items: [{ sku: 's', quantity: 1, unitPriceCents: 2 }],
    meta: { z: 1, a: { y: 2, b: 3 } },
  };
  const b = {
    meta: { a: { b: 3, y: 2 }, z: 1 },
    items: [{ unitPriceCents: 2, sku: 's', quantity: 1 }],
    customerId: 'c',
  };

  expect(canonicalJson(a)).toBe(canonicalJson(b));
});

test('keys are sorted and there is no insignificant whitespace', () => {
  expect(canonicalJson({ b: 1, a: [2, { d: null, c: 'x' }] })).toBe('{"a":[2,{"c":"x","d":null}],"b":1}');
});

test('the same document serialised with different whitespace canonicalises identically', () => {
  const compact = '{"customerId":"c","items":[{"sku":"s","quantity":1,"unitPriceCents":2}]}';
  const pretty = `{
    "items" : [ { "quantity" : 1 , "unitPriceCents" : 2, "sku" : "s" } ],
    "customerId" : "c"
  }`;

  expect(canonicalJson(JSON.parse(pretty))).toBe(canonicalJson(JSON.parse(compact)));
});

test('array order is significant', () => {
  expect(canonicalJson({ items: [1, 2] })).not.toBe(canonicalJson({ items: [2, 1] }));
});

test('different values stay different', () => {
  expect(canonicalJson({ quantity: 1 })).not.toBe(canonicalJson({ quantity: 2 }));
  expect(canonicalJson({ quantity: 1 })).not.toBe(canonicalJson({ quantity: '1' }));
});

test('primitives and null pass through as JSON', () => {
  expect(canonicalJson('a')).toBe('"a"');
  expect(canonicalJson(3)).toBe('3');
  expect(canonicalJson(null)).toBe('null');
  expect(canonicalJson([])).toBe('[]');
});

test('a "__proto__" member is kept, not taken for the prototype: two bodies differing only there differ', () => {
  const withProto = JSON.parse('{"__proto__":1,"a":2}') as unknown;

  expect(canonicalJson(withProto)).toBe('{"__proto__":1,"a":2}');
  expect(canonicalJson(withProto)).not.toBe(canonicalJson({ a: 2 }));
  expect(canonicalJson(JSON.parse('{"__proto__":{"b":1}}'))).toBe('{"__proto__":{"b":1}}');
});

test('ordinary bodies canonicalise exactly as JSON.stringify of their sorted copy: the API fingerprint is unchanged', () => {
  const body = { z: [3, { y: 1, b: null }], a: 'x', '10': 1, '9': 2, n: { d: true, c: 1.5 } };

  expect(canonicalJson(body)).toBe('{"9":2,"10":1,"a":"x","n":{"c":1.5,"d":true},"z":[3,{"b":null,"y":1}]}');
});
