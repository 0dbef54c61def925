/**
 * Exponential backoff with full jitter (AWS Architecture Blog, "Exponential
 * Backoff And Jitter"): wait a random time in [0, min(cap, base * 2^(attempt-1))].
 * Jitter spreads retries of messages that failed together, so a recovering
 * dependency is not hit by all of them at once. Used for the short in-process
 * retries, where no minimum wait is promised.
 */
export function fullJitterBackoffSeconds(
  attempt: number,
  options: { baseSeconds: number; capSeconds: number },
  random: () => number = Math.random,
): number {
  return Math.floor(random() * (backoffCeilingSeconds(attempt, options) + 1));
}

/** min(cap, base * 2^(attempt-1)), attempt counted from 1; huge attempts are capped, never Infinity. */
export function backoffCeilingSeconds(attempt: number, options: { baseSeconds: number; capSeconds: number }): number {
  const exponent = Math.max(0, attempt - 1);
  return Math.min(options.capSeconds, options.baseSeconds * 2 ** Math.min(exponent, 30));
}

// ----------------------------------------------------------------------------------------------
// The retry budget of the queue consumers: ONE definition, read by the infrastructure (the
// queues' maxReceiveCount, the consumers' environment, the RetryBudget Aspect) and by the
// consumers (through the environment the infrastructure sets), so the two cannot drift apart.
// ----------------------------------------------------------------------------------------------

export interface RetryBudget {
  /** First backoff ceiling, seconds. */
  baseSeconds: number;
  /** Largest single backoff, seconds. At most 5 minutes, so a recovered dependency is used again soon. */
  capSeconds: number;
  /** No transient failure may dead-letter a message before this much guaranteed backoff, seconds. */
  budgetSeconds: number;
}

/** The design number: 15 minutes of backoff, 2 s doubling up to 5 minutes a wait. */
export const RETRY_BUDGET: RetryBudget = Object.freeze({ baseSeconds: 2, capSeconds: 300, budgetSeconds: 900 });

/** The environment through which the stack hands the retry budget to a consumer. */
export const RETRY_ENV = Object.freeze({
  baseSeconds: 'BACKOFF_BASE_SECONDS',
  capSeconds: 'BACKOFF_CAP_SECONDS',
  /** FIFO consumers: how many tries of its own before the consumer dead-letters a record. */
  maxAttempts: 'RETRY_MAX_ATTEMPTS',
});

/** Largest backoff cap the design allows (one wait), and the most SQS accepts for a visibility timeout. */
export const MAX_BACKOFF_CAP_SECONDS = 300;
export const SQS_MAX_VISIBILITY_SECONDS = 43_200;

/**
 * The queue backoff: exponential with "equal jitter", a random wait in
 * [floor(ceiling / 2), ceiling] whole seconds.
 *
 * Why not full jitter ([0, ceiling]) here: full jitter may draw 0 on every
 * attempt, so no number of receives guarantees any time at all, and a message
 * could exhaust its receive count in seconds. Half the ceiling as a floor makes
 * the budget a guarantee (see guaranteedBudgetSeconds) while the other half
 * still spreads a herd of messages that failed together.
 */
export function retryBackoffSeconds(
  attempt: number,
  options: { baseSeconds: number; capSeconds: number },
  random: () => number = Math.random,
): number {
  const ceiling = backoffCeilingSeconds(attempt, options);
  const floor = guaranteedBackoffSeconds(attempt, options);
  return Math.min(ceiling, floor + Math.floor(random() * (ceiling - floor + 1)));
}

/**
 * The queue backoff of a try that failed with a hint (RetryLater: a provider's
 * `Retry-After`, or its "still running that key"): the longer of the drawn
 * backoff and the hint (rounded up to whole seconds), but a hint never raises
 * a wait above `capSeconds`. So:
 * - never shorter than the draw: every wait is still at least its guaranteed
 *   floor, and guaranteedBudgetSeconds (the retry budget) holds as before;
 * - never above the cap: a provider asking for an hour gets the cap's 5
 *   minutes, and is asked again then. A hinted wait may exceed its attempt's
 *   ceiling, so with hints the longest a message can back off is
 *   (attempts - 1) x cap instead of ceilingBudgetSeconds (65 min for the
 *   design's 14 tries), still far inside the queues' retention;
 * - no hint, or one that is not a finite number: the draw, unchanged.
 */
export function honourRetryHint(
  backoffSeconds: number,
  hintSeconds: number | undefined,
  options: { capSeconds: number },
): number {
  if (hintSeconds === undefined || !Number.isFinite(hintSeconds)) return backoffSeconds;
  return Math.max(backoffSeconds, Math.min(options.capSeconds, Math.ceil(hintSeconds)));
}

/**
 * The longest a message legitimately waits through one failed try: its batching window, a try that
 * holds it for the whole visibility timeout (a crash, or a timeout), and the longest single backoff
 * (the cap, which also bounds a provider's Retry-After). A source queue's age alarm that does not fire
 * at this age cannot fire on an ordinary retry; the RetryBudget synth rule checks each one.
 */
export function longestOrdinaryRetrySeconds(options: {
  capSeconds: number;
  batchingWindowSeconds: number;
  visibilityTimeoutSeconds: number;
}): number {
  return options.batchingWindowSeconds + options.visibilityTimeoutSeconds + options.capSeconds;
}

/** The least retryBackoffSeconds can draw for an attempt. */
export function guaranteedBackoffSeconds(
  attempt: number,
  options: { baseSeconds: number; capSeconds: number },
): number {
  return Math.floor(backoffCeilingSeconds(attempt, options) / 2);
}

/**
 * The backoff a message is guaranteed to wait before its `attempts`-th try
 * fails for good: the sum of the floors after tries 1 .. attempts-1. The wait
 * after the last try is not counted (SQS may move the message on the receive
 * that would follow it), so the figure is a lower bound.
 */
export function guaranteedBudgetSeconds(
  attempts: number,
  options: { baseSeconds: number; capSeconds: number },
): number {
  return sumOfWaits(attempts, (n) => guaranteedBackoffSeconds(n, options));
}

/** The same sum with each wait at the mean of its jitter range: what a message waits on average. */
export function expectedBudgetSeconds(attempts: number, options: { baseSeconds: number; capSeconds: number }): number {
  return sumOfWaits(attempts, (n) => (guaranteedBackoffSeconds(n, options) + backoffCeilingSeconds(n, options)) / 2);
}

/** The same sum with every wait at its ceiling: the longest a message can back off. */
export function ceilingBudgetSeconds(attempts: number, options: { baseSeconds: number; capSeconds: number }): number {
  return sumOfWaits(attempts, (n) => backoffCeilingSeconds(n, options));
}

/** `wait(n)` summed over the waits after tries 1 .. attempts-1 (none after the last try). */
function sumOfWaits(attempts: number, wait: (attempt: number) => number): number {
  let total = 0;
  for (let n = 1; n < attempts; n++) total += wait(n);
  return total;
}

/**
 * The fewest tries whose guaranteed backoff reaches the budget: the standard
 * queue's maxReceiveCount and the FIFO consumer's own try limit. Throws for a
 * budget no number of tries can reach (a floor of 0 s).
 */
export function attemptsForBudget(budget: RetryBudget): number {
  if (budget.budgetSeconds <= 0) return 1;
  if (guaranteedBackoffSeconds(Number.MAX_SAFE_INTEGER, budget) <= 0)
    throw new Error(`A backoff of base ${budget.baseSeconds} s, cap ${budget.capSeconds} s guarantees no wait`);
  let attempts = 1;
  while (guaranteedBudgetSeconds(attempts, budget) < budget.budgetSeconds) attempts += 1;
  return attempts;
}

/**
 * Receives a FIFO record may take that count no try: invocations that crashed
 * or were killed at their timeout (a record's deadline makes that rare, not
 * impossible: an out-of-memory kill, a host failure). Each burns a receive but
 * no try of the consumer's own count.
 */
export const FIFO_CRASH_ALLOWANCE = 10;

/**
 * The FIFO queue's maxReceiveCount, a backstop only: its consumer dead-letters
 * a transiently failing record itself after `attempts` tries of its own. A
 * record skipped behind a failure in its group is received (and counted by
 * SQS) without being tried; in one batch at most `batchSize - 1` records are
 * ahead of it, each tried at most `attempts` times, so it is received at most
 * batchSize x attempts times before its own last try. Crashes and timeouts (no
 * try counted) come on top: FIFO_CRASH_ALLOWANCE of them, so one crash does not
 * let SQS dead-letter, with no cause, a record that still has tries.
 */
export function fifoMaxReceiveCount(attempts: number, batchSize: number): number {
  return attempts * batchSize + FIFO_CRASH_ALLOWANCE;
}
