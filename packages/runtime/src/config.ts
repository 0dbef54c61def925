/**
 * Configuration is read once, at cold start, and a missing value stops the
 * function there: a typo in a variable name must fail the first invocation
 * loudly, not write to `undefined` later.
 *
 * `requireEnv`: a setting that must be there; unset, empty or blank throws.
 *
 * @example Read at module level, so a missing variable fails the cold start
 * ```ts
 * import { requireEnv } from '@exactly-once/runtime/runtime';
 *
 * const config = { ordersTable: requireEnv('ORDERS_TABLE_NAME'), idempotencyTable: requireEnv('IDEMPOTENCY_TABLE_NAME') };
 * ```
 */
export function requireEnv(name: string): string {
  const value = process.env[name];
  if (value === undefined || value.trim() === '') {
    throw new Error(`Missing required environment variable ${name}`);
  }
  return value;
}

/**
 * An integer setting that must be there: unset, empty or not an integer throws, at cold start.
 *
 * @example
 * ```ts
 * const keyExpirySeconds = requireIntEnv('IDEMPOTENCY_KEY_EXPIRY_SECONDS');
 * ```
 */
export function requireIntEnv(name: string): number {
  const raw = requireEnv(name);
  const value = Number(raw);
  if (!Number.isInteger(value)) {
    throw new Error(`Environment variable ${name} must be an integer, got "${raw}"`);
  }
  return value;
}

/**
 * An optional integer setting with a documented default; a present but malformed value still throws.
 *
 * @example
 * ```ts
 * const baseSeconds = optionalIntEnv('BACKOFF_BASE_SECONDS', 2); // what a consumer's wiring does with its backoff
 * ```
 */
export function optionalIntEnv(name: string, defaultValue: number): number {
  return process.env[name] === undefined || process.env[name] === '' ? defaultValue : requireIntEnv(name);
}

/**
 * An optional setting with a documented default: unset or empty gives the default.
 *
 * @example The caller rule's patterns (api/caller.ts)
 * ```ts
 * const list = optionalEnv(ENV.humanRolePatterns, DEFAULT_HUMAN_ROLE_PATTERNS.join(','));
 * ```
 */
export function optionalEnv(name: string, defaultValue: string): string {
  const value = process.env[name];
  return value === undefined || value.trim() === '' ? defaultValue : value;
}
