/**
 * Exponential backoff with full jitter (AWS Architecture Blog, "Exponential
 * Backoff And Jitter"): wait a random time in [0, min(cap, base * 2^(attempt-1))].
 * Jitter spreads retries of messages that failed together, so a recovering
 * dependency is not hit by all of them at once.
 */
export function fullJitterBackoffSeconds(
  attempt: number,
  options: { baseSeconds: number; capSeconds: number },
  random: () => number = Math.random,
): number {
  const exponent = Math.max(0, attempt - 1);
  const ceiling = Math.min(options.capSeconds, options.baseSeconds * 2 ** Math.min(exponent, 30));
  return Math.floor(random() * (ceiling + 1));
}
