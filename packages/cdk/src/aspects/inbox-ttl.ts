import { ENV } from '@exactly-once/runtime/env-names';
import { CorrectnessAspect, type CorrectnessAspectOptions } from './correctness-aspect';
import {
  EVENT_SOURCE_MAPPING,
  SQS_DEFAULT_RETENTION_SECONDS,
  environmentVariable,
  seconds,
  type RenderedResource,
  type StackModel,
} from './model';

/**
 * The environment variable from which a consumer takes the TTL of its inbox records, in seconds.
 *
 * @example
 * ```ts
 * environment: { [INBOX_TTL_ENV]: String(requiredInboxTtlSeconds({ sourceRetentionSeconds, deadLetterRetentionSeconds })) },
 * ```
 */
export const INBOX_TTL_ENV = ENV.inboxTtlSeconds;
/**
 * Time allowed for a dead-lettered message to be redriven and processed: 3 days. The consumer
 * pipelines derive their dedupe horizon from the same number (REDRIVE_ALLOWANCE), so the Aspect's
 * default checks exactly what the pipelines build.
 *
 * @example
 * ```ts
 * const ttl = requiredInboxTtlSeconds({ sourceRetentionSeconds, deadLetterRetentionSeconds, redriveAllowanceSeconds: 2 * DEFAULT_REDRIVE_ALLOWANCE_SECONDS });
 * ```
 */
export const DEFAULT_REDRIVE_ALLOWANCE_SECONDS = 3 * 86_400;

/**
 * The InboxTtl rule's options: the common ones, and the redrive allowance its floor includes.
 *
 * @example A stack that may take a week to redrive
 * ```ts
 * Aspects.of(this).add(new InboxTtlAspect({ redriveAllowanceSeconds: 7 * 86_400 }), { priority: AspectPriority.READONLY });
 * ```
 */
export interface InboxTtlOptions extends CorrectnessAspectOptions {
  /**
   * How long after leaving the dead-letter queue a redriven message may still be processed.
   *
   * @default DEFAULT_REDRIVE_ALLOWANCE_SECONDS (259200, 3 days)
   */
  readonly redriveAllowanceSeconds?: number;
}

/**
 * The shortest inbox TTL that outlives every delivery of a message: its time
 * in the source queue, then in the dead-letter queue, then the redrive. Use
 * it to set `INBOX_TTL_SECONDS` from the queues, so the two cannot drift apart.
 *
 * @example A consumer's TTL from its queue pair
 * ```ts
 * const ttl = requiredInboxTtlSeconds({
 *   sourceRetentionSeconds: queues.retentionPeriod.toSeconds(),
 *   deadLetterRetentionSeconds: DLQ_RETENTION.toSeconds(),
 *   redriveAllowanceSeconds: REDRIVE_ALLOWANCE.toSeconds(),
 * }); // 4 d + 14 d + the allowance
 * consumer.fn.addEnvironment(INBOX_TTL_ENV, String(ttl));
 * ```
 */
export function requiredInboxTtlSeconds(props: {
  sourceRetentionSeconds: number;
  deadLetterRetentionSeconds: number;
  /** @default DEFAULT_REDRIVE_ALLOWANCE_SECONDS (3 days) */
  redriveAllowanceSeconds?: number;
}): number {
  return (
    props.sourceRetentionSeconds +
    props.deadLetterRetentionSeconds +
    (props.redriveAllowanceSeconds ?? DEFAULT_REDRIVE_ALLOWANCE_SECONDS)
  );
}

/**
 * Rule InboxTtl: every function that consumes an SQS queue through an event
 * source mapping has an environment variable `INBOX_TTL_SECONDS` (a whole
 * number of seconds) >= source queue retention + its dead-letter queue's
 * retention + a redrive allowance (default 3 days).
 *
 * Why: a consumer makes its effect exactly-once by claiming the event's id in
 * its inbox table in the same transaction as the effect; a second delivery
 * finds the claim and does nothing. The claim carries a TTL so the table does
 * not grow forever. But a copy of the message may still be delivered as long
 * as it lives anywhere: in the source queue (up to its retention), then in
 * the dead-letter queue (up to its retention; a FIFO queue even restarts the
 * clock when it moves a message), then back in the source after a redrive.
 * If the inbox record has expired when that copy arrives, the claim succeeds
 * again and the effect (e.g. a non-idempotent `ADD`) is applied a second time.
 * (DynamoDB's TTL deletes late, never early, so the TTL is a safe lower bound.)
 *
 * A queue without a redrive policy counts its dead-letter retention as 0 (the
 * DeadLetterQueue rule reports the missing DLQ). The error is on the function.
 *
 * @example applyCorrectnessAspects registers it with the others; alone, e.g. in a test of this one rule
 * ```ts
 * Aspects.of(stack).add(new InboxTtlAspect({ redriveAllowanceSeconds: REDRIVE_ALLOWANCE.toSeconds() }), { priority: AspectPriority.READONLY });
 * ```
 */
export class InboxTtlAspect extends CorrectnessAspect {
  readonly rule = 'InboxTtl' as const;
  protected readonly resourceType = EVENT_SOURCE_MAPPING;
  private readonly redriveAllowanceSeconds: number;

  constructor(options: InboxTtlOptions = {}) {
    super(options);
    this.redriveAllowanceSeconds = options.redriveAllowanceSeconds ?? DEFAULT_REDRIVE_ALLOWANCE_SECONDS;
  }

  protected check(esm: RenderedResource, model: StackModel): void {
    const consumer = model.sqsConsumer(esm);
    if (consumer === undefined) return;
    const { queue, fn } = consumer;
    const redrive = model.deadLetterQueueOf(queue);
    const sourceRetention = seconds(queue, 'MessageRetentionPeriod', SQS_DEFAULT_RETENTION_SECONDS);
    const dlqRetention =
      redrive === undefined ? 0 : seconds(redrive.dlq, 'MessageRetentionPeriod', SQS_DEFAULT_RETENTION_SECONDS);
    const required = requiredInboxTtlSeconds({
      sourceRetentionSeconds: sourceRetention,
      deadLetterRetentionSeconds: dlqRetention,
      redriveAllowanceSeconds: this.redriveAllowanceSeconds,
    });
    const breakdown =
      `${sourceRetention} s (retention of ${queue.name}) + ${dlqRetention} s (retention of ` +
      `${redrive === undefined ? 'its dead-letter queue, none' : redrive.dlq.name}) + ${this.redriveAllowanceSeconds} s (redrive allowance) = ${required} s`;
    const consequence = 'a message redriven after its inbox record expired would have its effect applied a second time';

    const ttl = environmentVariable(fn, INBOX_TTL_ENV);
    if (ttl === undefined) {
      this.fail(
        fn,
        `Function ${fn.name} consumes queue ${queue.name} but has no ${INBOX_TTL_ENV} environment variable; ` +
          `its inbox records must outlive ${breakdown}, or ${consequence}. Set ${INBOX_TTL_ENV} to at least ${required}.`,
      );
      return;
    }
    if (!/^\d+$/.test(ttl)) {
      this.fail(
        fn,
        `Function ${fn.name} has ${INBOX_TTL_ENV} "${ttl}", not a whole number of seconds. Set it to at least ${required}.`,
      );
      return;
    }
    if (Number(ttl) < required) {
      this.fail(
        fn,
        `Function ${fn.name} consumes queue ${queue.name} with ${INBOX_TTL_ENV} ${ttl}, below ${breakdown}: ` +
          `${consequence}. Set ${INBOX_TTL_ENV} to at least ${required}.`,
      );
    }
  }
}
