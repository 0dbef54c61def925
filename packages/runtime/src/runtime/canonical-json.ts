/**
 * Canonical JSON: object keys sorted, no insignificant whitespace. Two bodies
 * that differ only in whitespace or key order canonicalise to the same string,
 * so a client that re-serialises its retry is not told "different payload".
 * Array order is significant (items are a list, not a set).
 *
 * @example
 * ```ts
 * canonicalJson({ b: 1, a: [2, 1] }) === canonicalJson(JSON.parse('{ "a": [2, 1], "b": 1 }')); // true
 * ```
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      // Defined, not assigned: assigning `__proto__` on a plain object sets its prototype and the member
      // vanishes from the JSON, so two bodies differing only there would hash alike.
      Object.defineProperty(sorted, key, {
        value: sortKeys((value as Record<string, unknown>)[key]),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return sorted;
  }
  return value;
}
