import { CorrectnessAspect } from './correctness-aspect';
import {
  EVENT_SOURCE_MAPPING,
  LAMBDA_DEFAULT_TIMEOUT_SECONDS,
  SQS_DEFAULT_VISIBILITY_TIMEOUT_SECONDS,
  seconds,
  type RenderedResource,
  type StackModel,
} from './model';

/**
 * AWS's guidance for SQS event sources: visibility >= 6 × function timeout + batching window.
 *
 * @example A consumer's queue, from its function's timeout and its spec's window
 * ```ts
 * const visibilityTimeout = Duration.seconds(VISIBILITY_TIMEOUT_FACTOR * timeout.toSeconds() + batchingWindow.toSeconds());
 * ```
 */
export const VISIBILITY_TIMEOUT_FACTOR = 6;

/**
 * Rule VisibilityTimeout: for every event source mapping that reads an SQS
 * queue, the queue's visibility timeout is at least 6 × the consumer's timeout
 * + the mapping's maximum batching window.
 *
 * Why: the poller holds a batch invisible while it fills the batching window,
 * then the function runs (and Lambda may retry a throttled invoke); if the
 * visibility timeout ends first, the same message is delivered again while its
 * first delivery is still being processed, so two deliveries race. The factor
 * 6 is AWS's margin for those retries.
 *
 * Defaults when unset: Lambda timeout 3 s, SQS visibility 30 s, window 0 s.
 * The error is reported on the queue, the resource to change.
 *
 * @example applyCorrectnessAspects registers it with the others; alone, e.g. in a test of this one rule
 * ```ts
 * Aspects.of(stack).add(new VisibilityTimeoutAspect(), { priority: AspectPriority.READONLY });
 * ```
 */
export class VisibilityTimeoutAspect extends CorrectnessAspect {
  readonly rule = 'VisibilityTimeout' as const;
  protected readonly resourceType = EVENT_SOURCE_MAPPING;

  protected check(esm: RenderedResource, model: StackModel): void {
    const consumer = model.sqsConsumer(esm);
    if (consumer === undefined) return;
    const { queue, fn } = consumer;
    const timeout = seconds(fn, 'Timeout', LAMBDA_DEFAULT_TIMEOUT_SECONDS);
    const window = seconds(esm, 'MaximumBatchingWindowInSeconds', 0);
    const visibility = seconds(queue, 'VisibilityTimeout', SQS_DEFAULT_VISIBILITY_TIMEOUT_SECONDS);
    const required = VISIBILITY_TIMEOUT_FACTOR * timeout + window;
    if (visibility < required) {
      this.fail(
        queue,
        `Queue ${queue.name} has visibility timeout ${visibility} s, below ${VISIBILITY_TIMEOUT_FACTOR} × ${timeout} s ` +
          `(timeout of consumer ${fn.name}) + ${window} s (maximum batching window of ${esm.name}) = ${required} s: ` +
          'a message would become visible, and be delivered again, while its first delivery is still being processed. ' +
          `Set the visibility timeout to at least ${required} s.`,
      );
    }
  }
}
