import { Duration } from 'aws-cdk-lib';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Construct } from 'constructs';
import {
  attemptsForBudget,
  fifoMaxReceiveCount,
  RETRY_BUDGET,
  RETRY_ENV,
  type RetryBudget,
} from '../../lambdas/domain/backoff';
import type { EntryPoint } from '../../lambdas/entry-points';
import { requiredInboxTtlSeconds, VISIBILITY_TIMEOUT_FACTOR } from '../aspects';
import { HouseFunction } from './house-function';
import { DLQ_RETENTION, QueueWithDlq } from './queue-with-dlq';

export interface PipelinesProps {
  effectsTableName: string;
  providerLogTableName: string;
  /** Default RETRY_BUDGET (15 minutes of guaranteed backoff, 2 s doubling, 5 minutes a wait at most). */
  retryBudget?: RetryBudget;
}

/** How long a consumed message may be redelivered after its first delivery, beyond queue + DLQ retention. */
export const REDRIVE_ALLOWANCE = Duration.days(3);

export interface ConsumerPipeline {
  name: string;
  queues: QueueWithDlq;
  consumer: HouseFunction;
}

/**
 * The two delivery pipelines, each a queue + DLQ and its consumer:
 * - fulfilment: FIFO (group = orderId), one batch per group at a time, so an
 *   order's events arrive in order; reserves and releases stock;
 * - loyalty: standard queue, parallel, credits points on OrderPlaced.
 *
 * Visibility timeout = 6 x consumer timeout + batching window (AWS's guidance
 * for SQS event sources): shorter, and a slow batch reappears while still being
 * worked on. The Aspects enforce it.
 *
 * Retry budget (one setting, RETRY_BUDGET, shared with the consumers): a
 * transient failure is retried with a backoff of ceiling min(cap, base x 2^(try-1))
 * and a guaranteed floor of half of it; the fewest tries whose floors add up to
 * the budget is the standard queue's maxReceiveCount and the FIFO consumer's own
 * try limit (the FIFO queue's maxReceiveCount is that x batch size, a backstop:
 * see fulfilment-consumer). The consumers get base, cap and try limit through
 * their environment; the RetryBudget Aspect re-checks the sums on the template.
 *
 * Inbox TTL = source retention + DLQ retention + redrive allowance: a message
 * can be redelivered (or redriven from the DLQ) that long after its first
 * delivery, and its claim must still be there to stop a second effect.
 */
export class Pipelines extends Construct {
  readonly fulfilment: ConsumerPipeline;
  readonly loyalty: ConsumerPipeline;

  constructor(scope: Construct, id: string, props: PipelinesProps) {
    super(scope, id);
    this.fulfilment = this.pipeline('Fulfilment', {
      name: 'fulfilment',
      entryPoint: 'fulfilment-consumer',
      fifo: true,
      batchSize: 10,
      batchingWindow: Duration.seconds(0), // FIFO event sources take no batching window
      maxConcurrency: 10,
      props,
    });
    this.loyalty = this.pipeline('Loyalty', {
      name: 'loyalty',
      entryPoint: 'loyalty-consumer',
      fifo: false,
      batchSize: 10,
      batchingWindow: Duration.seconds(1),
      maxConcurrency: 10,
      props,
    });
  }

  private pipeline(
    id: string,
    options: {
      name: string;
      entryPoint: EntryPoint;
      fifo: boolean;
      batchSize: number;
      batchingWindow: Duration;
      maxConcurrency: number;
      props: PipelinesProps;
    },
  ): ConsumerPipeline {
    const consumerTimeout = Duration.seconds(30);
    const visibilityTimeout = Duration.seconds(
      VISIBILITY_TIMEOUT_FACTOR * consumerTimeout.toSeconds() + options.batchingWindow.toSeconds(),
    );
    const budget = options.props.retryBudget ?? RETRY_BUDGET;
    const attempts = attemptsForBudget(budget);
    const queues = new QueueWithDlq(this, `${id}Queues`, {
      fifo: options.fifo,
      visibilityTimeout,
      maxReceiveCount: options.fifo ? fifoMaxReceiveCount(attempts, options.batchSize) : attempts,
    });
    const inboxTtl = requiredInboxTtlSeconds({
      sourceRetentionSeconds: queues.retentionPeriod.toSeconds(),
      deadLetterRetentionSeconds: DLQ_RETENTION.toSeconds(),
      redriveAllowanceSeconds: REDRIVE_ALLOWANCE.toSeconds(),
    });

    const consumer = new HouseFunction(this, `${id}Consumer`, {
      entryPoint: options.entryPoint,
      timeout: consumerTimeout,
      // Invoked only through its event source mapping (synchronously): failures stay on the queue and redrive to its DLQ.
      asyncDeadLetterQueue: false,
      environment: {
        EFFECTS_TABLE_NAME: options.props.effectsTableName,
        PROVIDER_LOG_TABLE_NAME: options.props.providerLogTableName,
        INBOX_TTL_SECONDS: String(inboxTtl),
        QUEUE_URL: queues.queue.queueUrl,
        DEAD_LETTER_QUEUE_URL: queues.deadLetterQueue.queueUrl,
        [RETRY_ENV.baseSeconds]: String(budget.baseSeconds),
        [RETRY_ENV.capSeconds]: String(budget.capSeconds),
        ...(options.fifo ? { [RETRY_ENV.maxAttempts]: String(attempts) } : {}),
      },
    });
    consumer.fn.addEventSource(
      new SqsEventSource(queues.queue, {
        batchSize: options.batchSize,
        maxBatchingWindow: options.batchingWindow.toSeconds() > 0 ? options.batchingWindow : undefined,
        reportBatchItemFailures: true,
        maxConcurrency: options.maxConcurrency,
      }),
    );
    // A permanent error goes straight to the DLQ, with its cause, without burning retries.
    queues.deadLetterQueue.grantSendMessages(consumer.fn);
    return { name: options.name, queues, consumer };
  }
}
