import { MAX_IDEMPOTENCY_KEY_LENGTH, parseIdempotencyKey } from '@exactly-once/runtime/api';

/** The Idempotency-Key header (docs/http-api.md): an RFC 9651 sf-string or a bare token, 1-255 printable ASCII. */

function keyOf(...values: string[]): string | undefined {
  const result = parseIdempotencyKey(values);
  return result.ok ? result.key : undefined;
}

describe('accepted keys', () => {
  test.each([
    ['a quoted sf-string', '"order-123"', 'order-123'],
    ['a bare token (Stripe form)', 'order-123', 'order-123'],
    ['a UUID as a bare token', '6f1c0b7e-2d7a-4c55-9b0e-3f1d2a9c8e41', '6f1c0b7e-2d7a-4c55-9b0e-3f1d2a9c8e41'],
    ['an escaped quote inside an sf-string', '"say \\"hi\\""', 'say "hi"'],
    ['an escaped backslash inside an sf-string', '"a\\\\b"', 'a\\b'],
    ['spaces and a comma inside an sf-string', '"a b, c"', 'a b, c'],
    ['surrounding optional whitespace', '  "k"  ', 'k'],
  ])('%s', (_name, header, expected) => {
    const result = parseIdempotencyKey([header]);

    expect(result).toEqual({ ok: true, key: expected });
  });

  test('quoted and bare forms of the same key are the same key', () => {
    expect(keyOf('"abc"')).toBe(keyOf('abc'));
  });
});

describe('length is judged after unquoting', () => {
  test(`${MAX_IDEMPOTENCY_KEY_LENGTH} characters is accepted, bare and quoted`, () => {
    const key = 'k'.repeat(255);

    expect(keyOf(key)).toBe(key);
    expect(keyOf(`"${key}"`)).toBe(key);
  });

  test('256 characters is refused, bare and quoted', () => {
    const key = 'k'.repeat(256);

    expect(parseIdempotencyKey([key]).ok).toBe(false);
    expect(parseIdempotencyKey([`"${key}"`]).ok).toBe(false);
  });

  test('escapes count once: 254 characters plus an escaped quote is 255 and accepted', () => {
    const header = `"${'k'.repeat(254)}\\""`;

    expect(header.length).toBeGreaterThan(257);
    expect(keyOf(header)).toBe(`${'k'.repeat(254)}"`);
  });

  test('an empty quoted string is refused', () => {
    const result = parseIdempotencyKey(['""']);

    expect(result).toEqual({ ok: false, reason: expect.stringContaining('1 to 255') });
  });

  test.each([[''], ['   ']])('an empty header value %j is refused', (header) => {
    expect(parseIdempotencyKey([header]).ok).toBe(false);
  });
});

describe('refused keys', () => {
  test.each([
    ['non-ASCII in an sf-string', '"clé"'],
    ['non-ASCII as a bare token', 'clé'],
    ['an emoji', '"order-🚀"'],
    ['a control character (tab) in an sf-string', '"a\tb"'],
    ['an unknown escape', '"a\\nb"'],
    ['an escaped closing quote (so unterminated)', '"abc\\"'],
    ['no closing quote', '"abc'],
    ['trailing junk after the closing quote', '"abc"x'],
    ['two sf-strings in one line', '"a" "b"'],
    ['two sf-strings folded with a comma', '"a", "b"'],
    ['a comma in a bare value (two folded header lines)', 'a,b'],
    ['a space in a bare value', 'a b'],
    ['a quote inside a bare value', 'a"b'],
  ])('%s', (_name, header) => {
    const result = parseIdempotencyKey([header]);

    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(/\S/);
  });
});

describe('header presence', () => {
  test.each([
    ['missing', undefined],
    ['no values', []],
  ])('%s is refused as required', (_name, values) => {
    const result = parseIdempotencyKey(values);

    expect(result).toEqual({ ok: false, reason: expect.stringContaining('required') });
  });

  test('two header lines are refused, even when they agree', () => {
    expect(parseIdempotencyKey(['"a"', '"b"'])).toEqual({ ok: false, reason: expect.stringContaining('exactly once') });
    expect(parseIdempotencyKey(['"a"', '"a"'])).toEqual({ ok: false, reason: expect.stringContaining('exactly once') });
  });
});
