import { fullJitterBackoffSeconds } from '../consumer/retry-budget';
import { logger } from './observability';

/**
 * Contention (a transaction conflict, throttling) is retried inside the
 * invocation first: full-jitter waits of at most `capMs` each, so a hot item
 * (many orders on one SKU) costs latency, not queue tries. The retries stop at
 * the record's deadline (`signal`): what is left is the queue's backoff.
 */
export interface InProcessRetry {
  attempts: number;
  baseMs: number;
  capMs: number;
  isContention(error: unknown): boolean;
  sleep?(ms: number): Promise<void>;
  random?(): number;
}

/**
 * 6 tries, waits drawn from [0, min(1 s, 50 ms x 2^(n-1))]: at most 1.55 s of
 * waiting in all, far inside a record's deadline. A conflict on a hot item
 * clears in one or two waits; throttling that outlasts them is for the queue.
 */
export const IN_PROCESS_RETRY = Object.freeze({ attempts: 6, baseMs: 50, capMs: 1_000 });

/**
 * Runs `work`, retrying contention up to `policy.attempts` tries in all with
 * full-jitter waits, never past `signal`'s abort; rethrows everything else.
 * Wrap one write (a ledger transaction, a done-mark), never a sequence that
 * includes an external call: a retry must not repeat a call that went through.
 */
export async function withContentionRetries<T>(
  work: () => Promise<T>,
  policy: InProcessRetry,
  signal?: AbortSignal,
): Promise<T> {
  const sleep = policy.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const random = policy.random ?? Math.random;
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= policy.attempts || !policy.isContention(error) || signal?.aborted === true) throw error;
      // The domain's full jitter, counted in milliseconds here.
      const waitMs = fullJitterBackoffSeconds(
        attempt,
        { baseSeconds: policy.baseMs, capSeconds: policy.capMs },
        random,
      );
      logger.info('Contention: retrying in-process', { attempt, waitMs, error });
      await sleep(waitMs);
    }
  }
}
