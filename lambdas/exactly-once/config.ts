/**
 * Configuration is read once, at cold start, and a missing value stops the
 * function there: a typo in a variable name must fail the first invocation
 * loudly, not write to `undefined` later.
 */
export function requireEnv(name: string): string {
  const value = process.env[name];
  if (value === undefined || value.trim() === '') {
    throw new Error(`Missing required environment variable ${name}`);
  }
  return value;
}

export function requireIntEnv(name: string): number {
  const raw = requireEnv(name);
  const value = Number(raw);
  if (!Number.isInteger(value)) {
    throw new Error(`Environment variable ${name} must be an integer, got "${raw}"`);
  }
  return value;
}

/** An optional integer setting with a documented default; a present but malformed value still throws. */
export function optionalIntEnv(name: string, defaultValue: number): number {
  return process.env[name] === undefined || process.env[name] === '' ? defaultValue : requireIntEnv(name);
}

/** An optional setting with a documented default: unset or empty gives the default. */
export function optionalEnv(name: string, defaultValue: string): string {
  const value = process.env[name];
  return value === undefined || value.trim() === '' ? defaultValue : value;
}
