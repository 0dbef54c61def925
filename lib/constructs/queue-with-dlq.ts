import { Duration } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

export interface QueueWithDlqProps {
  fifo: boolean;
  visibilityTimeout: Duration;
  /** Source retention, default 4 days; the DLQ always keeps 14 days, longer than any source. */
  retentionPeriod?: Duration;
  /**
   * Receives before SQS moves a message to the DLQ. Derive it from the retry
   * budget (lambdas/domain/backoff: attemptsForBudget, fifoMaxReceiveCount), as
   * the pipelines do; the RetryBudget Aspect checks the arithmetic.
   */
  maxReceiveCount: number;
}

export const DLQ_RETENTION = Duration.days(14);
export const DEFAULT_SOURCE_RETENTION = Duration.days(4);

/**
 * A source queue and its dead-letter queue of the same type (a FIFO queue can
 * only redrive to a FIFO DLQ). Both encrypted and TLS-only. FIFO queues use the
 * high-throughput settings: dedup scope and throughput limit per message group.
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
    const fifoSettings: Partial<sqs.QueueProps> = props.fifo ? { fifo: true, contentBasedDeduplication: false } : {};

    this.deadLetterQueue = new sqs.Queue(this, 'Dlq', {
      ...fifoSettings,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: DLQ_RETENTION,
    });
    this.queue = new sqs.Queue(this, 'Queue', {
      ...fifoSettings,
      ...(props.fifo
        ? {
            deduplicationScope: sqs.DeduplicationScope.MESSAGE_GROUP,
            fifoThroughputLimit: sqs.FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
          }
        : {}),
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: props.visibilityTimeout,
      retentionPeriod: this.retentionPeriod,
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: this.maxReceiveCount },
    });
  }
}
