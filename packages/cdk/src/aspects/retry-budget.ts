import {
  attemptsForBudget,
  ceilingBudgetSeconds,
  FIFO_CRASH_ALLOWANCE,
  fifoMaxReceiveCount,
  guaranteedBudgetSeconds,
  longestOrdinaryRetrySeconds,
  MAX_BACKOFF_CAP_SECONDS,
  RETRY_BUDGET,
  RETRY_ENV,
  SQS_MAX_VISIBILITY_SECONDS,
} from '@exactly-once/runtime/consumer/retry-budget';
import { CorrectnessAspect, type CorrectnessAspectOptions } from './correctness-aspect';
import {
  EVENT_SOURCE_MAPPING,
  LAMBDA_DEFAULT_TIMEOUT_SECONDS,
  SQS_DEFAULT_VISIBILITY_TIMEOUT_SECONDS,
  environmentVariable,
  isFifo,
  numberValue,
  seconds,
  type RenderedResource,
  type StackModel,
} from './model';

/** SQS event source mappings take 10 records a batch unless told otherwise. */
const SQS_DEFAULT_BATCH_SIZE = 10;

/**
 * The RetryBudget rule's options: the common ones, and the budget it checks against.
 *
 * @example A stack whose consumers must ride out half an hour of outage
 * ```ts
 * Aspects.of(this).add(new RetryBudgetAspect({ budgetSeconds: 1_800 }), { priority: AspectPriority.READONLY });
 * ```
 */
export interface RetryBudgetOptions extends CorrectnessAspectOptions {
  /**
   * Least guaranteed backoff before a transient failure may dead-letter a message.
   *
   * @default 900 (15 min: the consumers' own retry budget)
   */
  readonly budgetSeconds?: number;
}

/**
 * Rule RetryBudget: for every function that consumes an SQS queue, the
 * arithmetic of its retries, read from the rendered template:
 * - the function's environment carries the backoff (`BACKOFF_BASE_SECONDS`,
 *   `BACKOFF_CAP_SECONDS`, whole seconds, base >= 1) with a cap of at most
 *   5 minutes (and so within SQS's 12 h visibility limit);
 * - the guaranteed backoff before the last try, the sum of the floors
 *   floor(min(cap, base x 2^(n-1)) / 2) over tries 1 .. N-1, is at least the
 *   budget (15 minutes), where N is the queue's maxReceiveCount on a standard
 *   queue, and the consumer's own try limit `RETRY_MAX_ATTEMPTS` on a FIFO one;
 * - FIFO: maxReceiveCount >= try limit x batch size + a crash allowance
 *   (fifoMaxReceiveCount), so a record skipped,
 *   untried, behind failures in its group cannot run out of receives first;
 * - the visibility timeout outlasts an invocation (function timeout + batching
 *   window): the consumers keep no heartbeat, so a try must not outlive it;
 * - an alarm on the queue's ApproximateAgeOfOldestMessage does not fire at the
 *   longest ordinary retry (batching window + visibility timeout + cap:
 *   longestOrdinaryRetrySeconds), so one failed try and its backoff never page anyone.
 *
 * Why: with maxReceiveCount 5 and a 2 s base, a dependency down for half a
 * minute dead-lettered live traffic. The floors (not the ceilings) are summed
 * because the consumers draw each wait in [ceiling/2, ceiling]: the sum is a
 * guarantee, not an average. See packages/runtime/src/consumer/retry-budget.ts.
 * Errors are reported on the queue, except a missing or wrong variable (on the function).
 *
 * @example applyCorrectnessAspects registers it with the others; alone, e.g. in a test of this one rule
 * ```ts
 * Aspects.of(stack).add(new RetryBudgetAspect(), { priority: AspectPriority.READONLY });
 * ```
 */
export class RetryBudgetAspect extends CorrectnessAspect {
  readonly rule = 'RetryBudget' as const;
  protected readonly resourceType = EVENT_SOURCE_MAPPING;
  private readonly budgetSeconds: number;

  constructor(options: RetryBudgetOptions = {}) {
    super(options);
    this.budgetSeconds = options.budgetSeconds ?? RETRY_BUDGET.budgetSeconds;
  }

  protected check(esm: RenderedResource, model: StackModel): void {
    const consumer = model.sqsConsumer(esm);
    if (consumer === undefined) return;
    const { queue, fn } = consumer;

    this.guard(queue, () => {
      const timeout = seconds(fn, 'Timeout', LAMBDA_DEFAULT_TIMEOUT_SECONDS);
      const window = seconds(esm, 'MaximumBatchingWindowInSeconds', 0);
      const visibility = seconds(queue, 'VisibilityTimeout', SQS_DEFAULT_VISIBILITY_TIMEOUT_SECONDS);
      if (visibility < timeout + window) {
        this.fail(
          queue,
          `Queue ${queue.name} has visibility timeout ${visibility} s, shorter than one invocation of ${fn.name} ` +
            `(${timeout} s timeout + ${window} s batching window): the consumers keep no heartbeat, so a message would ` +
            'be delivered again while its try still runs. Raise the visibility timeout.',
        );
      }
    });

    const redrive = model.deadLetterQueueOf(queue);
    if (redrive === undefined) return; // the DeadLetterQueue rule reports it
    const base = this.envSeconds(fn, RETRY_ENV.baseSeconds);
    const cap = this.envSeconds(fn, RETRY_ENV.capSeconds);
    if (base === undefined || cap === undefined) return;
    if (base < 1) {
      this.fail(
        fn,
        `Function ${fn.name} has ${RETRY_ENV.baseSeconds} ${base}: a backoff from 0 s guarantees no wait at all. Set it to at least 1.`,
      );
      return;
    }
    if (cap > SQS_MAX_VISIBILITY_SECONDS) {
      this.fail(
        fn,
        `Function ${fn.name} has ${RETRY_ENV.capSeconds} ${cap}, above SQS's largest visibility timeout ` +
          `(${SQS_MAX_VISIBILITY_SECONDS} s): the backoff could not be set. Set it to at most ${MAX_BACKOFF_CAP_SECONDS}.`,
      );
    } else if (cap > MAX_BACKOFF_CAP_SECONDS) {
      this.fail(
        fn,
        `Function ${fn.name} has ${RETRY_ENV.capSeconds} ${cap}, above ${MAX_BACKOFF_CAP_SECONDS} s: after an outage a ` +
          `message would wait that long before it is tried again. Set it to at most ${MAX_BACKOFF_CAP_SECONDS}.`,
      );
    }
    const backoff = { baseSeconds: base, capSeconds: cap };
    const needed = attemptsForBudget({ ...backoff, budgetSeconds: this.budgetSeconds });
    this.guard(queue, () => this.checkAgeAlarms(queue, esm, fn, cap, model));

    this.guard(queue, () => {
      const maxReceiveCount = numberValue(redrive.maxReceiveCount, `maxReceiveCount of ${queue.name}`);
      const fifo = isFifo(queue);
      const attempts = fifo ? this.envSeconds(fn, RETRY_ENV.maxAttempts) : maxReceiveCount;
      if (attempts === undefined) return;
      const what = fifo ? `${RETRY_ENV.maxAttempts} of ${fn.name}` : `maxReceiveCount of ${queue.name}`;
      const guaranteed = guaranteedBudgetSeconds(attempts, backoff);
      if (guaranteed < this.budgetSeconds) {
        this.fail(
          fifo ? fn : queue,
          `${what} is ${attempts}: with backoff base ${base} s and cap ${cap} s, a transiently failing message is ` +
            `dead-lettered after a guaranteed ${guaranteed} s of backoff (at most ${ceilingBudgetSeconds(attempts, backoff)} s), ` +
            `below the retry budget of ${this.budgetSeconds} s: an outage that long would dead-letter live traffic. ` +
            `Set it to at least ${needed}.`,
        );
      }
      if (fifo) {
        const batchSize = seconds(esm, 'BatchSize', SQS_DEFAULT_BATCH_SIZE);
        const needed = fifoMaxReceiveCount(attempts, batchSize);
        if (maxReceiveCount < needed) {
          this.fail(
            queue,
            `FIFO queue ${queue.name} has maxReceiveCount ${maxReceiveCount}, below ${attempts} tries x ${batchSize} ` +
              `(batch size of ${esm.name}) + ${FIFO_CRASH_ALLOWANCE} (crash allowance) = ${needed}: a record skipped, ` +
              'untried, behind failures in its group is received each time, and a crash or timeout counts a receive ' +
              'but no try, so it could be dead-lettered by SQS, with no cause, before its own tries are spent. ' +
              `Set maxReceiveCount to at least ${needed}.`,
          );
        }
      }
    });
  }

  /** No age alarm on the source queue fires at the age of the longest ordinary retry. */
  private checkAgeAlarms(
    queue: RenderedResource,
    esm: RenderedResource,
    fn: RenderedResource,
    capSeconds: number,
    model: StackModel,
  ): void {
    const batchingWindowSeconds = seconds(esm, 'MaximumBatchingWindowInSeconds', 0);
    const visibilityTimeoutSeconds = seconds(queue, 'VisibilityTimeout', SQS_DEFAULT_VISIBILITY_TIMEOUT_SECONDS);
    const floor = longestOrdinaryRetrySeconds({ capSeconds, batchingWindowSeconds, visibilityTimeoutSeconds });
    for (const alarm of model.queueAlarms(queue, 'ApproximateAgeOfOldestMessage')) {
      const threshold = numberValue(alarm.properties.Threshold, `Threshold of ${alarm.name}`);
      const inclusive = alarm.properties.ComparisonOperator !== 'GreaterThanThreshold';
      if (inclusive ? threshold > floor : threshold >= floor) continue;
      this.fail(
        alarm,
        `Alarm ${alarm.name} fires when the oldest message of ${queue.name} is ${threshold} s old, not above the longest ` +
          `ordinary retry of ${fn.name}: ${batchingWindowSeconds} s batching window + ${visibilityTimeoutSeconds} s ` +
          `visibility timeout (a try that crashed or timed out) + ${capSeconds} s backoff cap = ${floor} s, so one ` +
          `failed try and its backoff would page someone. Set its threshold above ${floor}.`,
      );
    }
  }

  /** A whole-seconds (or count) variable of the function; reports it and returns undefined when missing or malformed. */
  private envSeconds(fn: RenderedResource, name: string): number | undefined {
    const text = environmentVariable(fn, name);
    if (text === undefined) {
      this.fail(
        fn,
        `Function ${fn.name} consumes a queue but has no ${name} environment variable: its retry budget cannot be ` +
          'checked. Set the retry variables from the shared retry budget (packages/runtime/src/consumer/retry-budget.ts).',
      );
      return undefined;
    }
    if (!/^\d+$/.test(text)) {
      this.fail(fn, `Function ${fn.name} has ${name} "${text}", not a whole number.`);
      return undefined;
    }
    return Number(text);
  }
}
