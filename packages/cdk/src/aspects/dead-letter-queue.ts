import { CorrectnessAspect } from './correctness-aspect';
import {
  SQS_DEFAULT_RETENTION_SECONDS,
  SQS_QUEUE,
  isFifo,
  numberValue,
  seconds,
  type RenderedResource,
  type StackModel,
} from './model';

/**
 * Fewer receives than this dead-letters healthy messages during a burst of transient failures.
 *
 * @example
 * ```ts
 * deadLetterQueue: { queue: dlq, maxReceiveCount: Math.max(MIN_MAX_RECEIVE_COUNT, attempts) },
 * ```
 */
export const MIN_MAX_RECEIVE_COUNT = 5;

/**
 * Rule DeadLetterQueue: every source queue has a redrive policy to a
 * dead-letter queue of the same type (FIFO ↔ FIFO, standard ↔ standard), with
 * `maxReceiveCount` >= 5, and the dead-letter queue keeps messages longer than
 * the source (MessageRetentionPeriod strictly greater; default 4 days).
 *
 * Why: without a DLQ a message that always fails is retried until its
 * retention ends and then silently lost; a low `maxReceiveCount` dead-letters
 * healthy messages during throttling, a deploy or partial-batch retries; SQS
 * refuses a DLQ of the other type; and a standard queue keeps a message's
 * original enqueue time when it moves it, so a DLQ that keeps messages no
 * longer than the source may expire them before anyone looks.
 *
 * A queue counts as a dead-letter queue, and is exempt, when this stack uses
 * it as one (a redrive target, a function DeadLetterConfig, an on-failure
 * destination, an EventBridge or Scheduler dead-letter config) or it declares
 * itself one with a RedriveAllowPolicy of `allowAll` or `byQueue` (the way to
 * mark a DLQ whose sources live elsewhere). See `StackModel`.
 * Each violation is its own error, on the source queue.
 *
 * @example applyCorrectnessAspects registers it with the others; alone, e.g. in a test of this one rule
 * ```ts
 * Aspects.of(stack).add(new DeadLetterQueueAspect(), { priority: AspectPriority.READONLY });
 * ```
 */
export class DeadLetterQueueAspect extends CorrectnessAspect {
  readonly rule = 'DeadLetterQueue' as const;
  protected readonly resourceType = SQS_QUEUE;

  protected check(queue: RenderedResource, model: StackModel): void {
    if (model.deadLetterReason(queue) !== undefined) return;
    const redrive = model.deadLetterQueueOf(queue);
    if (redrive === undefined) {
      this.fail(
        queue,
        `Queue ${queue.name} has no redrive policy: a message that always fails would be retried until its retention ends, then lost. ` +
          'Give it a dead-letter queue (or, if it is itself the dead-letter queue of a queue outside this stack, a RedriveAllowPolicy).',
      );
      return;
    }
    const { dlq, maxReceiveCount } = redrive;

    this.guard(queue, () => {
      const sourceFifo = isFifo(queue);
      const dlqFifo = isFifo(dlq);
      if (sourceFifo !== dlqFifo) {
        const kind = (fifo: boolean): string => (fifo ? 'FIFO' : 'standard');
        this.fail(
          queue,
          `Queue ${queue.name} is ${kind(sourceFifo)} but its dead-letter queue ${dlq.name} is ${kind(dlqFifo)}: ` +
            'a dead-letter queue must be of the same type as its source. ' +
            `Use a ${kind(sourceFifo)} dead-letter queue.`,
        );
      }
    });

    this.guard(queue, () => {
      const count = numberValue(maxReceiveCount, `maxReceiveCount of ${queue.name}`);
      if (count < MIN_MAX_RECEIVE_COUNT) {
        this.fail(
          queue,
          `Queue ${queue.name} has maxReceiveCount ${count}, below ${MIN_MAX_RECEIVE_COUNT}: throttling, a deploy or a partial-batch retry ` +
            `would move healthy messages to ${dlq.name}. Set maxReceiveCount to at least ${MIN_MAX_RECEIVE_COUNT}.`,
        );
      }
    });

    this.guard(queue, () => {
      const sourceRetention = seconds(queue, 'MessageRetentionPeriod', SQS_DEFAULT_RETENTION_SECONDS);
      const dlqRetention = seconds(dlq, 'MessageRetentionPeriod', SQS_DEFAULT_RETENTION_SECONDS);
      if (dlqRetention <= sourceRetention) {
        this.fail(
          queue,
          `Queue ${queue.name} retains messages for ${sourceRetention} s and its dead-letter queue ${dlq.name} for ${dlqRetention} s, not longer: ` +
            'a dead-lettered message could expire before it is inspected or redriven. ' +
            'Give the dead-letter queue a longer MessageRetentionPeriod (e.g. 14 days = 1209600 s).',
        );
      }
    });
  }
}
