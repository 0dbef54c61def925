import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type { ConsumerRoute } from '@exactly-once/runtime/outbox/routes';
import { PENDING_OUTBOX_INDEX } from '@exactly-once/runtime/aws/outbox-table';
import type { ConsumerPipeline } from './consumer-pipelines';
import { grantIndexActions, grantTableActions } from './grants';
import type { OutboxRelay } from './outbox-relay';
import { allowOnlyDeadLetterSenders, allowOnlySenders } from './queue-senders';

/**
 * Who else may send to the consumers' queues, besides the relay and the sweeper.
 *
 * @example
 * ```ts
 * grantOutboxPublishing(outbox, pipelines.all, storage.ordersTable, { operatorRoleArns: ['arn:aws:iam::123456789012:role/DlqOperator'] });
 * ```
 */
export interface OutboxPublishingOptions {
  /**
   * Roles a person assumes to redrive dead-lettered messages into a source queue (the DLQ tool's
   * `redrive`, SQS's own DLQ redrive): the only principals besides the producers that may send there,
   * and besides each consumer the only ones that may send to its DLQ.
   *
   * @default - none: only the relay and the sweeper may send; a redrive must then run as one of them
   */
  readonly operatorRoleArns?: readonly string[];
}

/**
 * The relay's routes to the consumers' queues: each event type to every queue whose consumer takes it.
 *
 * @example
 * ```ts
 * const outbox = new OutboxRelay(this, 'OutboxRelay', { outboxTable, entityPartitionPrefix: 'BOOKING#', routes: outboxRoutes(pipelines.all) });
 * ```
 */
export function outboxRoutes(pipelines: readonly ConsumerPipeline[]): ConsumerRoute[] {
  return pipelines.map((p) => ({
    consumer: p.spec.name,
    queueUrl: p.queues.queue.queueUrl,
    fifo: p.spec.fifo,
    eventTypes: [...p.spec.eventTypes],
    // Only when it differs from the default, so a list without ordering keys keeps its routes as they were.
    ...(p.spec.fifo && p.spec.orderBy === 'ordering-key' ? { orderBy: 'ordering-key' as const } : {}),
  }));
}

/**
 * Where the outbox meets the pipelines: the relay and the sweeper may send to every consumer's queue and
 * mark an outbox item dispatched; the sweeper may query the pending index and re-read its candidates
 * from the table (the index lags, so it checks before it trusts one). Every consumer's queue then
 * denies sending to anyone else but the operator roles (allowOnlySenders): the channel is authenticated.
 * Each consumer's DLQ likewise takes messages only from its consumer (a permanent failure's copy), the
 * operator roles and SQS's own dead-lettering (allowOnlyDeadLetterSenders): a redrive moves the DLQ's
 * messages into the guarded queue, so an open DLQ would be a side door into it.
 *
 * @example
 * ```ts
 * grantOutboxPublishing(outbox, pipelines.all, storage.bookingsTable);
 * ```
 */
export function grantOutboxPublishing(
  outbox: OutboxRelay,
  pipelines: readonly ConsumerPipeline[],
  outboxTable: dynamodb.ITable,
  options: OutboxPublishingOptions = {},
): void {
  const publishers = [outbox.streamRelay, outbox.sweeper];
  for (const publisher of publishers) {
    for (const { queues } of pipelines) queues.queue.grantSendMessages(publisher.fn);
    grantTableActions(publisher.fn, outboxTable, ['UpdateItem']);
  }
  const senders = [...publishers.map((p) => p.fn.role!.roleArn), ...(options.operatorRoleArns ?? [])];
  for (const { queues } of pipelines) allowOnlySenders(queues.queue, senders);
  for (const { queues, consumer } of pipelines)
    allowOnlyDeadLetterSenders(queues.deadLetterQueue, [
      consumer.fn.role!.roleArn,
      ...(options.operatorRoleArns ?? []),
    ]);
  grantIndexActions(outbox.sweeper.fn, outboxTable, PENDING_OUTBOX_INDEX, ['Query']);
  grantTableActions(outbox.sweeper.fn, outboxTable, ['BatchGetItem']);
}
