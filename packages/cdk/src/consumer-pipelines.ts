import { Duration } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Construct } from 'constructs';
import {
  attemptsForBudget,
  fifoMaxReceiveCount,
  RETRY_BUDGET,
  RETRY_ENV,
  type RetryBudget,
} from '@exactly-once/runtime/consumer/retry-budget';
import { dedupeWindow, type DedupeWindow } from '@exactly-once/runtime/consumer/dedupe-horizon';
import { consumerId, ledgerOf, validateConsumerSpecs, type ConsumerSpec } from '@exactly-once/runtime/consumer-spec';
import { ENV, providerEnvNames } from '@exactly-once/runtime/env-names';
import { DEFAULT_REDRIVE_ALLOWANCE_SECONDS, VISIBILITY_TIMEOUT_FACTOR } from './aspects';
import { tagFaultTarget } from './fault-injection';
import { FunctionWithDefaults } from './function-defaults';
import { grantTableActions } from './grants';
import type { ProviderEndpoints } from './provider-endpoints';
import { DLQ_RETENTION } from './queue-defaults';
import { QueueWithDlq } from './queue-with-dlq';

/**
 * What the consumer pipelines are built from: the consumer list, the event types produced, the tables and the providers.
 *
 * @example
 * ```ts
 * const props: PipelinesProps = { consumers: CONSUMERS, producedTypes: ORDER_EVENT_TYPES, effectsTable, providerLogTable, providers: config.providers };
 * ```
 */
export interface PipelinesProps {
  /** Who consumes what (the application's consumer list): one pipeline each, in this order. */
  readonly consumers: readonly ConsumerSpec[];
  /** The event types the producers write; a consumer taking any other is refused at synth. */
  readonly producedTypes: readonly string[];
  /**
   * The effects table (inbox claims and the effects they guard): every consumer's EFFECTS_TABLE_NAME,
   * and each consumer may put a claim and update an effect there.
   */
  readonly effectsTable: dynamodb.ITable;
  /**
   * The provider log (the recording provider double): every consumer's PROVIDER_LOG_TABLE_NAME, and
   * each consumer may update its call records there.
   */
  readonly providerLogTable: dynamodb.ITable;
  /**
   * The consumers' retry budget: backoff base and cap, and the least backoff before a dead letter.
   * @default RETRY_BUDGET (15 minutes of guaranteed backoff, 2 s doubling, 5 minutes a wait at most)
   */
  readonly retryBudget?: RetryBudget;
  /**
   * Where the consumers' external providers are (by the names the specs list in `providers`): each
   * consumer calling a configured one gets its endpoint and its API-key parameter's name in its
   * environment, and may read that one parameter. A provider not configured is the recording test
   * double (the provider log table). A configured provider no consumer calls is refused at synth.
   * @default {} (every provider is the recording double)
   */
  readonly providers?: ProviderEndpoints;
}

/**
 * How long a consumed message may be redelivered after its first delivery, beyond queue + DLQ retention.
 *
 * @example
 * ```ts
 * applyCorrectnessAspects(this, { redriveAllowanceSeconds: REDRIVE_ALLOWANCE.toSeconds() });
 * ```
 */
export const REDRIVE_ALLOWANCE = Duration.seconds(DEFAULT_REDRIVE_ALLOWANCE_SECONDS);

/** Every consumer's Lambda timeout; its queue's visibility timeout is derived from it. */
const CONSUMER_TIMEOUT = Duration.seconds(30);

/**
 * One consumer's pipeline: its spec, its queue and DLQ, its function and its dedupe window.
 *
 * @example
 * ```ts
 * for (const { queues } of pipelines.all) queues.queue.grantSendMessages(relay.fn); // one per spec
 * ```
 */
export interface ConsumerPipeline {
  spec: ConsumerSpec;
  queues: QueueWithDlq;
  consumer: FunctionWithDefaults;
  /** Its claim TTL and dedupe horizon (packages/runtime/src/consumer/dedupe-horizon.ts), as its function's environment has them. */
  dedupe: DedupeWindow;
  /** Its retry budget (backoff base and cap), as its function's environment has it. */
  retryBudget: RetryBudget;
  /** Its SQS event source mapping's id (UUID): the `EventSourceMappingUUID` of the mapping's own metrics. */
  eventSourceMappingId: string;
}

/**
 * One delivery pipeline per consumer spec: a queue + DLQ (FIFO or standard,
 * as the spec says) and its consumer function on an SQS event source with the
 * spec's batch settings. A FIFO queue hands out one batch per message group
 * (entity) at a time, so an entity's events arrive in order; a standard queue
 * is parallel and unordered. Construct ids are `<Id>Queues` / `<Id>Consumer`
 * (Id = consumerId(name)), so a consumer's resources keep their logical ids
 * when others are added or removed.
 *
 * Each consumer may do exactly what it writes: the inbox claim (Put) and its effect (Update) in one
 * transaction on the effects table, then the provider call's lease and done-mark (Update) on the
 * provider log. A consumer that could delete or scan the inbox could lose a claim.
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
 * Dedupe horizon = source retention + DLQ retention + redrive allowance: a
 * message can be redelivered (or redriven from the DLQ) that long after its
 * first delivery; the consumer applies nothing older by itself. Inbox TTL =
 * horizon + a margin for clock skew (packages/runtime/src/consumer/dedupe-horizon.ts), so a
 * claim outlives every event young enough to be applied. A redrive can give an
 * event ever new retention: the horizon, not the TTL, is what bounds it.
 *
 * @example
 * ```ts
 * const pipelines = new ConsumerPipelines(this, 'Pipelines', {
 *   consumers: CONSUMERS,
 *   producedTypes: ORDER_EVENT_TYPES,
 *   effectsTable: effects,
 *   providerLogTable: providerLog,
 *   providers: config.providers,
 * });
 * ```
 */
export class ConsumerPipelines extends Construct {
  /** Every consumer's pipeline, in the order of the consumer list. */
  readonly all: ConsumerPipeline[];

  constructor(scope: Construct, id: string, props: PipelinesProps) {
    super(scope, id);
    // A bad list fails synth with the spec's one-line reason, before anything is built from it.
    validateConsumerSpecs(props.consumers, props.producedTypes);
    // The relay refuses an empty route list at cold start: refuse it here, before a deploy.
    if (props.consumers.length === 0) throw new Error('No consumers: the consumer list needs at least one spec');
    const called = new Set(props.consumers.flatMap((spec) => spec.providers ?? []));
    for (const name of Object.keys(props.providers ?? {}))
      if (!called.has(name))
        throw new Error(
          `Provider "${name}" is configured, but no consumer calls it (known: ${[...called].join(', ')})`,
        );
    this.all = props.consumers.map((spec) => this.pipeline(spec, props));
  }

  /** The pipeline of the consumer named `name`; throws for a name not on the list. */
  byName(name: string): ConsumerPipeline {
    const found = this.all.find((p) => p.spec.name === name);
    if (found === undefined) throw new Error(`No consumer pipeline named "${name}"`);
    return found;
  }

  private pipeline(spec: ConsumerSpec, props: PipelinesProps): ConsumerPipeline {
    const id = consumerId(spec.name);
    const batchingWindow = Duration.seconds(spec.batchingWindowSeconds);
    const visibilityTimeout = Duration.seconds(
      VISIBILITY_TIMEOUT_FACTOR * CONSUMER_TIMEOUT.toSeconds() + batchingWindow.toSeconds(),
    );
    const budget = props.retryBudget ?? RETRY_BUDGET;
    const attempts = attemptsForBudget(budget);
    const queues = new QueueWithDlq(this, `${id}Queues`, {
      fifo: spec.fifo,
      visibilityTimeout,
      maxReceiveCount: spec.fifo ? fifoMaxReceiveCount(attempts, spec.batchSize) : attempts,
    });
    const dedupe = dedupeWindow({
      sourceRetentionSeconds: queues.retentionPeriod.toSeconds(),
      deadLetterRetentionSeconds: DLQ_RETENTION.toSeconds(),
      redriveAllowanceSeconds: REDRIVE_ALLOWANCE.toSeconds(),
    });

    const consumer = new FunctionWithDefaults(this, `${id}Consumer`, {
      entry: spec.entry,
      // Named by the consumer, not its code: two consumers may run one entry point.
      name: `${spec.name}-consumer`,
      timeout: CONSUMER_TIMEOUT,
      // Invoked only through its event source mapping (synchronously): failures stay on the queue and redrive to its DLQ.
      asyncDeadLetterQueue: false,
      environment: {
        [ENV.effectsTable]: props.effectsTable.tableName,
        [ENV.providerLogTable]: props.providerLogTable.tableName,
        // The try counter's items expire with the inbox TTL whatever the ledger.
        [ENV.inboxTtlSeconds]: String(dedupe.claimTtlSeconds),
        // A sequenced consumer's claim never expires: no horizon, or it would refuse a redrive it can judge.
        ...(ledgerOf(spec) === 'sequenced'
          ? { [ENV.consumerLedger]: 'sequenced' }
          : { [ENV.dedupeHorizonSeconds]: String(dedupe.horizonSeconds) }),
        [ENV.queueUrl]: queues.queue.queueUrl,
        [ENV.deadLetterQueueUrl]: queues.deadLetterQueue.queueUrl,
        [RETRY_ENV.baseSeconds]: String(budget.baseSeconds),
        [RETRY_ENV.capSeconds]: String(budget.capSeconds),
        ...(spec.fifo ? { [RETRY_ENV.maxAttempts]: String(attempts) } : {}),
      },
    });
    const source = new SqsEventSource(queues.queue, {
      batchSize: spec.batchSize,
      // FIFO event sources take no batching window (validateConsumerSpecs refuses one).
      maxBatchingWindow: spec.batchingWindowSeconds > 0 ? batchingWindow : undefined,
      reportBatchItemFailures: true,
      maxConcurrency: spec.maxConcurrency,
      // The mapping's own counts (polled, invoked, failed, deleted): what was consumed, beside what was applied.
      metricsConfig: { metrics: [lambda.MetricType.EVENT_COUNT] },
    });
    consumer.fn.addEventSource(source);
    // A permanent error goes straight to the DLQ, with its cause, without burning retries.
    queues.deadLetterQueue.grantSendMessages(consumer.fn);
    for (const name of spec.providers ?? []) {
      const configured = props.providers?.[name];
      if (configured === undefined) continue;
      const names = providerEnvNames(name);
      consumer.fn.addEnvironment(names.endpoint, configured.endpoint);
      consumer.fn.addEnvironment(names.apiKeyParameter, configured.apiKeyParameter);
      // The one parameter, by its ARN: a read of any other key is denied.
      ssm.StringParameter.fromSecureStringParameterAttributes(this, `${id}${consumerId(name)}ApiKey`, {
        parameterName: configured.apiKeyParameter,
      }).grantRead(consumer.fn);
    }
    tagFaultTarget(consumer.fn, 'consumer');
    grantTableActions(consumer.fn, props.effectsTable, ['PutItem', 'UpdateItem']);
    grantTableActions(consumer.fn, props.providerLogTable, ['UpdateItem']);
    return { spec, queues, consumer, dedupe, retryBudget: budget, eventSourceMappingId: source.eventSourceMappingId };
  }
}
