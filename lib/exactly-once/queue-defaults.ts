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

/** Every dead-letter queue keeps a message 14 days (SQS's maximum), longer than any source, to leave time to redrive. */
export const DLQ_RETENTION = Duration.days(14);
/** A source queue keeps a message 4 days (SQS's default), written out because the inbox TTL is derived from it. */
export const DEFAULT_SOURCE_RETENTION = Duration.days(4);

/** Any queue: encrypted at rest with SQS-managed keys, and a policy refusing every request not over TLS. */
export function defaultQueueProps(): sqs.QueueProps {
  return { encryption: sqs.QueueEncryption.SQS_MANAGED, enforceSSL: true };
}

/**
 * A queue that only receives what failed elsewhere: a redrive target, an
 * on-failure destination, an async-invocation DLQ. FIFO when its source is
 * (a FIFO queue can only redrive to a FIFO DLQ).
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
 */
export function sourceQueueProps(options: {
  fifo: boolean;
  visibilityTimeout: Duration;
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
