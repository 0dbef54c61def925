import { Duration } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';

/**
 * The settings every queue of the project starts from, in one place (in the
 * style of the AWS Solutions Constructs' `*-defaults.ts`): a construct that
 * makes a queue takes these and overrides only what is its own (visibility,
 * the redrive's receive count). Written once, so a new queue cannot forget
 * encryption or the TLS-only policy, and the retention arithmetic the inbox
 * TTL depends on reads the same numbers the queues get.
 */

/**
 * Every dead-letter queue keeps a message 14 days (SQS's maximum), longer than any source, to leave time to redrive.
 *
 * @example The inbox TTL must outlive the DLQ too
 * ```ts
 * requiredInboxTtlSeconds({ sourceRetentionSeconds: queues.retentionPeriod.toSeconds(), deadLetterRetentionSeconds: DLQ_RETENTION.toSeconds() });
 * ```
 */
export const DLQ_RETENTION = Duration.days(14);
/**
 * A source queue keeps a message 4 days (SQS's default), written out because the inbox TTL is derived from it.
 *
 * @example
 * ```ts
 * requiredInboxTtlSeconds({ sourceRetentionSeconds: DEFAULT_SOURCE_RETENTION.toSeconds(), deadLetterRetentionSeconds: DLQ_RETENTION.toSeconds() });
 * ```
 */
export const DEFAULT_SOURCE_RETENTION = Duration.days(4);

/**
 * Any queue: encrypted at rest with SQS-managed keys, and a policy refusing every request not over TLS.
 *
 * @example A queue of the application's own, with its DLQ (the DeadLetterQueue Aspect refuses one without)
 * ```ts
 * const dlq = new sqs.Queue(this, 'WebhooksDlq', deadLetterQueueProps());
 * const webhooks = new sqs.Queue(this, 'Webhooks', { ...defaultQueueProps(), deadLetterQueue: { queue: dlq, maxReceiveCount: 10 } });
 * ```
 */
export function defaultQueueProps(): sqs.QueueProps {
  return { encryption: sqs.QueueEncryption.SQS_MANAGED, enforceSSL: true };
}

/**
 * A queue that only receives what failed elsewhere: a redrive target, an
 * on-failure destination, an async-invocation DLQ. FIFO when its source is
 * (a FIFO queue can only redrive to a FIFO DLQ). `fifo` defaults to false.
 *
 * @example The relay's on-failure queue (packages/cdk/src/outbox-relay.ts)
 * ```ts
 * this.failureQueue = new sqs.Queue(this, 'RelayFailures', deadLetterQueueProps());
 * ```
 */
export function deadLetterQueueProps(options: { fifo?: boolean } = {}): sqs.QueueProps {
  return {
    ...(options.fifo === true ? fifoSettings() : {}),
    ...defaultQueueProps(),
    retentionPeriod: DLQ_RETENTION,
  };
}

/**
 * A consumer's source queue, redriving to `deadLetterQueue` after
 * `maxReceiveCount` receives. FIFO queues get the high-throughput settings:
 * deduplication and throughput limit per message group. Content-based
 * deduplication is off: the relay sets each message's deduplication id.
 *
 * @example A source queue and its DLQ of the same type (what QueueWithDlq does)
 * ```ts
 * const deadLetterQueue = new sqs.Queue(this, 'Dlq', deadLetterQueueProps({ fifo: true }));
 * const queue = new sqs.Queue(this, 'Queue', sourceQueueProps({ fifo: true, visibilityTimeout, deadLetterQueue, maxReceiveCount }));
 * ```
 */
export function sourceQueueProps(options: {
  fifo: boolean;
  visibilityTimeout: Duration;
  /** @default DEFAULT_SOURCE_RETENTION (4 days) */
  retentionPeriod?: Duration;
  deadLetterQueue: sqs.IQueue;
  maxReceiveCount: number;
}): sqs.QueueProps {
  return {
    ...(options.fifo
      ? {
          ...fifoSettings(),
          deduplicationScope: sqs.DeduplicationScope.MESSAGE_GROUP,
          fifoThroughputLimit: sqs.FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
        }
      : {}),
    ...defaultQueueProps(),
    visibilityTimeout: options.visibilityTimeout,
    retentionPeriod: options.retentionPeriod ?? DEFAULT_SOURCE_RETENTION,
    deadLetterQueue: { queue: options.deadLetterQueue, maxReceiveCount: options.maxReceiveCount },
  };
}

function fifoSettings(): Partial<sqs.QueueProps> {
  return { fifo: true, contentBasedDeduplication: false };
}
