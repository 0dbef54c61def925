/**
 * The longest key accepted, after unquoting.
 *
 * @example
 * ```ts
 * const key = `${runId}-${n}`.slice(0, MAX_IDEMPOTENCY_KEY_LENGTH);
 * ```
 */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/**
 * The key, or why the header cannot be one (a sentence for a 400's detail).
 *
 * @example
 * ```ts
 * const result: IdempotencyKeyResult = parseIdempotencyKey(['"k-1"']); // { ok: true, key: 'k-1' }
 * ```
 */
export type IdempotencyKeyResult = { ok: true; key: string } | { ok: false; reason: string };

/**
 * Parses the `Idempotency-Key` request header.
 *
 * Accepted forms:
 * - an RFC 9651 sf-string: `"abc"` with `\"` and `\\` escapes (the IETF draft's form);
 * - a bare value (Stripe's form): printable ASCII without spaces, quotes or commas.
 * After unquoting the key must be 1-255 printable ASCII characters.
 *
 * A comma in a bare value means two header lines were folded into one by a
 * proxy, so it is rejected like two header lines are: which key would we honour?
 *
 * @example
 * ```ts
 * const key = parseIdempotencyKey(headerValues(event, 'Idempotency-Key'));
 * if (!key.ok) return problem({ status: 400, title: 'Invalid Idempotency-Key', detail: key.reason });
 * ```
 */
export function parseIdempotencyKey(values: readonly string[] | undefined): IdempotencyKeyResult {
  if (values === undefined || values.length === 0) {
    return { ok: false, reason: 'The Idempotency-Key header is required.' };
  }
  if (values.length > 1) {
    return { ok: false, reason: 'The Idempotency-Key header must appear exactly once.' };
  }
  const raw = values[0].trim();
  const key = raw.startsWith('"') ? unquoteSfString(raw) : bareKey(raw);
  if (key === undefined) {
    return {
      ok: false,
      reason: 'The Idempotency-Key header must be a quoted structured-field string or a bare token of printable ASCII.',
    };
  }
  if (key.length < 1 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    return {
      ok: false,
      reason: `The Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters long.`,
    };
  }
  return { ok: true, key };
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
const BARE_KEY = /^[\x21-\x7e]+$/;

function bareKey(raw: string): string | undefined {
  if (!BARE_KEY.test(raw) || raw.includes('"') || raw.includes(',')) return undefined;
  return raw;
}

function unquoteSfString(raw: string): string | undefined {
  if (!PRINTABLE_ASCII.test(raw)) return undefined;
  let out = '';
  for (let i = 1; i < raw.length; i++) {
    const ch = raw[i];
    if (ch === '\\') {
      const next = raw[i + 1];
      if (next !== '"' && next !== '\\') return undefined;
      out += next;
      i++;
    } else if (ch === '"') {
      // The closing quote must end the value: `"a" "b"` or `"a"x` is not one string.
      return i === raw.length - 1 ? out : undefined;
    } else {
      out += ch;
    }
  }
  return undefined; // no closing quote
}
