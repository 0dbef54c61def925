import { Duration, Stack, Validations } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { ConsumerRoute } from '@exactly-once/runtime/outbox/routes';
import { DEFAULT_DISPATCHED_RETENTION_SECONDS, ENTITY_OUTBOX } from '@exactly-once/runtime/aws/outbox-table';
import { ENV } from '@exactly-once/runtime/env-names';
import { tagFaultTarget } from './fault-injection';
import { FunctionWithDefaults } from './function-defaults';
import { deadLetterQueueProps } from './queue-defaults';

/**
 * The relay's handler module: its absolute path in `@exactly-once/runtime`, wherever the application
 * installed it (an application's own entries are relative to its root; an absolute one is taken as is).
 *
 * @example Every module the stack deploys, e.g. for a test that bundles each one
 * ```ts
 * const entries = [...CONSUMERS.map((c) => c.entry), RELAY_ENTRY, SWEEPER_ENTRY];
 * ```
 */
export const RELAY_ENTRY = require.resolve('@exactly-once/runtime/wiring/handlers/relay-handler');
/**
 * The sweeper's handler module, as RELAY_ENTRY: its absolute path in `@exactly-once/runtime`.
 *
 * @example
 * ```ts
 * const entries = [...CONSUMERS.map((c) => c.entry), RELAY_ENTRY, SWEEPER_ENTRY];
 * ```
 */
export const SWEEPER_ENTRY = require.resolve('@exactly-once/runtime/wiring/handlers/sweeper-handler');

/**
 * Where the outbox items are and where they go. The table's stream must carry new images, the
 * table must have the pending-outbox index (PENDING_OUTBOX_INDEX), and its TTL attribute must be
 * OUTBOX_TTL_ATTRIBUTE (the OutboxRetention synth rule checks it); the routes come from the
 * consumer pipelines, so a consumer added to the list is routed without editing this.
 *
 * @example
 * ```ts
 * const props: OutboxRelayProps = {
 *   outboxTable: storage.ordersTable,
 *   entityPartitionPrefix: ORDER_PK_PREFIX,
 *   routes: pipelines.all.map((p) => ({ consumer: p.spec.name, queueUrl: p.queues.queue.queueUrl, fifo: p.spec.fifo, eventTypes: [...p.spec.eventTypes] })),
 * };
 * ```
 */
export interface OutboxRelayProps {
  /** The table whose stream carries the outbox items (NEW_IMAGE) and whose pending-outbox index the sweeper reads. */
  readonly outboxTable: dynamodb.ITable;
  /**
   * The partition-key prefix of the entities whose partitions hold their outbox items
   * (`<prefix><entityId>`): how the relay and the sweeper find an item to mark it dispatched.
   */
  readonly entityPartitionPrefix: string;
  /** Every consumer's queue and the event types it takes: the relay and the sweeper route by them. */
  readonly routes: ConsumerRoute[];
  /**
   * The sweeper republishes outbox items older than this.
   *
   * @default Duration.minutes(5)
   */
  readonly sweepAge?: Duration;
  /**
   * How long an outbox item is kept once dispatched (its TTL, OUTBOX_TTL_ATTRIBUTE); at least the
   * stream's 24 h (the OutboxRetention synth rule checks it).
   *
   * @default Duration.days(7)
   */
  readonly dispatchedRetention?: Duration;
}

/**
 * Moves outbox items from the outbox table to the queues:
 * - the relay, on the table's stream: only outbox INSERTs invoke it (filter);
 *   one batch at a time per shard, so records of one order stay in order;
 *   bisect on error, bounded retries and record age, then an on-failure queue;
 * - the sweeper, on a schedule: republishes whatever the stream never relayed.
 *
 * Neither reserves concurrency. Two sweeps (or a sweep and the relay) may
 * publish the same outbox item; that is harmless by design: the FIFO queue's
 * deduplication id is the eventId, consumers claim the eventId in their inbox
 * before any effect, and marking an item dispatched is idempotent. A reserved
 * concurrency of 1 would buy nothing but a failed first deploy in accounts at
 * the default concurrency quota (see packages/cdk/src/aspects/reserved-concurrency.ts).
 *
 * The stack grants the rest where the relay meets the other constructs: sending to each
 * consumer's queue, UpdateItem on the table (the dispatched mark), and the sweeper's Query on
 * the index and BatchGetItem on the table. Without them the relay and the sweeper fail, and the
 * outbox items stay unpublished.
 *
 * @example As ExactlyOnce builds it on the application's outbox table, with the grants (packages/cdk/src/exactly-once.ts)
 * ```ts
 * const outbox = new OutboxRelay(this, 'OutboxRelay', {
 *   outboxTable: ordersTable,
 *   entityPartitionPrefix: 'ORDER#',
 *   routes: outboxRoutes(pipelines),
 * });
 * grantOutboxPublishing(outbox, pipelines, ordersTable);
 * ```
 */
export class OutboxRelay extends Construct {
  /** Publishes outbox items from the table's stream. */
  readonly streamRelay: FunctionWithDefaults;
  readonly sweeper: FunctionWithDefaults;
  readonly failureQueue: sqs.Queue;
  readonly sweepAge: Duration;
  /** The stream event source mapping's id (UUID): the `EventSourceMappingUUID` of its own metrics. */
  readonly streamMappingId: string;

  constructor(scope: Construct, id: string, props: OutboxRelayProps) {
    super(scope, id);
    this.sweepAge = props.sweepAge ?? Duration.minutes(5);
    // One JSON variable; the queue URLs in it are tokens, which toJsonString resolves at deploy.
    const queueEnv = { [ENV.consumerRoutes]: Stack.of(this).toJsonString(props.routes) };
    const outboxEnv = {
      [ENV.outboxTable]: props.outboxTable.tableName,
      [ENV.outboxEntityPartitionPrefix]: props.entityPartitionPrefix,
      [ENV.outboxDispatchedRetentionSeconds]: String(
        (props.dispatchedRetention ?? Duration.seconds(DEFAULT_DISPATCHED_RETENTION_SECONDS)).toSeconds(),
      ),
    };

    this.failureQueue = new sqs.Queue(this, 'RelayFailures', deadLetterQueueProps());
    Validations.of(this.failureQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: "This queue is itself a dead-letter queue: the stream event source mapping's on-failure destination.",
    });

    this.streamRelay = new FunctionWithDefaults(this, 'Relay', {
      entry: RELAY_ENTRY,
      timeout: Duration.seconds(30),
      // Stream-invoked: failures go to the mapping's on-failure destination, not an async DLQ.
      asyncDeadLetterQueue: false,
      environment: { ...outboxEnv, ...queueEnv },
    });
    const streamSource = new DynamoEventSource(props.outboxTable, {
      startingPosition: lambda.StartingPosition.TRIM_HORIZON,
      batchSize: 100,
      maxBatchingWindow: Duration.seconds(1),
      parallelizationFactor: 1,
      bisectBatchOnError: true,
      retryAttempts: 8,
      maxRecordAge: Duration.hours(6),
      reportBatchItemFailures: true,
      onFailure: new SqsDlq(this.failureQueue),
      filters: [
        lambda.FilterCriteria.filter({
          eventName: lambda.FilterRule.isEqual('INSERT'),
          dynamodb: { NewImage: { entity: { S: lambda.FilterRule.isEqual(ENTITY_OUTBOX) } } },
        }),
      ],
      // The mapping's own counts, among them records dropped without reaching the on-failure queue.
      metricsConfig: { metrics: [lambda.MetricType.EVENT_COUNT] },
    });
    this.streamRelay.fn.addEventSource(streamSource);
    this.streamMappingId = streamSource.eventSourceMappingId;

    tagFaultTarget(this.streamRelay.fn, 'relay');

    Validations.of(this.streamRelay.fn.role!).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Besides X-Ray (as every function), the stream event source needs dynamodb:ListStreams, which supports no resource-level permissions.',
    });

    this.sweeper = new FunctionWithDefaults(this, 'Sweeper', {
      entry: SWEEPER_ENTRY,
      timeout: Duration.seconds(60),
      // No reserved concurrency: an overlapping sweep only republishes what consumers dedupe (see above).
      environment: {
        ...outboxEnv,
        ...queueEnv,
        [ENV.outboxSweepAgeSeconds]: String(this.sweepAge.toSeconds()),
      },
    });
    new events.Rule(this, 'SweepSchedule', {
      schedule: events.Schedule.rate(Duration.minutes(1)),
      targets: [
        new targets.LambdaFunction(this.sweeper.fn, {
          retryAttempts: 2,
          deadLetterQueue: this.sweeper.asyncDeadLetterQueue,
        }),
      ],
    });
  }
}
