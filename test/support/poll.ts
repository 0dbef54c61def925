/**
 * Polls instead of sleeping: a fixed sleep races the timer it waits for (a
 * lock, a visibility timeout, a cold start) and fails on a slow machine.
 * Calls `attempt` every `intervalMs` until `done` accepts its result, and
 * returns that result; after `timeoutMs` (generous: it only bounds a broken
 * run) it throws with the last result, so the failure says what was seen.
 */
export async function pollUntil<T>(
  attempt: () => Promise<T>,
  done: (result: T) => boolean,
  options: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<T> {
  const { timeoutMs = 30_000, intervalMs = 100 } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await attempt();
    if (done(result)) return result;
    if (Date.now() >= deadline)
      throw new Error(
        `Still not ${options.what ?? 'done'} after ${timeoutMs} ms; last result: ${JSON.stringify(result)}`,
      );
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
