import type { Duration } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { DEFAULT_SOURCE_RETENTION, deadLetterQueueProps, sourceQueueProps } from './queue-defaults';

/**
 * A consumer's queue pair: its type, how long a received message stays invisible, how long the
 * source keeps it and how many receives it gets before the DLQ.
 *
 * @example A consumer's queues (what ConsumerPipelines makes from a spec)
 * ```ts
 * const props: QueueWithDlqProps = { fifo: spec.fifo, visibilityTimeout, maxReceiveCount };
 * ```
 */
export interface QueueWithDlqProps {
  /** A FIFO pair (group order, deduplication) or a standard one; the DLQ is always of the same type. */
  readonly fifo: boolean;
  /** The source queue's visibility timeout: at least 6 x its consumer's timeout + batching window (checked at synth). */
  readonly visibilityTimeout: Duration;
  /**
   * Source retention; the DLQ always keeps 14 days, longer than any source.
   *
   * @default DEFAULT_SOURCE_RETENTION (4 days)
   */
  readonly retentionPeriod?: Duration;
  /**
   * Receives before SQS moves a message to the DLQ. Derive it from the retry
   * budget (packages/runtime/src/consumer/retry-budget: attemptsForBudget, fifoMaxReceiveCount), as
   * the pipelines do; the RetryBudget Aspect checks the arithmetic.
   */
  readonly maxReceiveCount: number;
}

/**
 * A source queue and its dead-letter queue of the same type, both with the
 * project's queue defaults (queue-defaults.ts: encrypted, TLS-only, the
 * retentions, FIFO high-throughput settings).
 *
 * @example
 * ```ts
 * const queues = new QueueWithDlq(this, `${consumerId(spec.name)}Queues`, {
 *   fifo: spec.fifo,
 *   visibilityTimeout: Duration.seconds(VISIBILITY_TIMEOUT_FACTOR * timeout.toSeconds() + batchingWindow.toSeconds()),
 *   maxReceiveCount, // from the retry budget: the RetryBudget Aspect checks it
 * });
 * consumer.fn.addEventSource(new SqsEventSource(queues.queue, { reportBatchItemFailures: true }));
 * ```
 */
export class QueueWithDlq extends Construct {
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;
  readonly retentionPeriod: Duration;
  readonly visibilityTimeout: Duration;
  readonly maxReceiveCount: number;

  constructor(scope: Construct, id: string, props: QueueWithDlqProps) {
    super(scope, id);
    this.retentionPeriod = props.retentionPeriod ?? DEFAULT_SOURCE_RETENTION;
    this.visibilityTimeout = props.visibilityTimeout;
    this.maxReceiveCount = props.maxReceiveCount;

    this.deadLetterQueue = new sqs.Queue(this, 'Dlq', deadLetterQueueProps({ fifo: props.fifo }));
    this.queue = new sqs.Queue(
      this,
      'Queue',
      sourceQueueProps({
        fifo: props.fifo,
        visibilityTimeout: props.visibilityTimeout,
        retentionPeriod: this.retentionPeriod,
        deadLetterQueue: this.deadLetterQueue,
        maxReceiveCount: this.maxReceiveCount,
      }),
    );
  }
}
