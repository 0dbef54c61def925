import type { Template } from 'aws-cdk-lib/assertions';
import { RETRY_ENV } from '@exactly-once/runtime/consumer/retry-budget';
import { consumerOutputNames, type ConsumerSpec } from '@exactly-once/runtime/consumer-spec';
import { DEFAULT_SETTINGS, type SimConsumer } from '@exactly-once/tools/simulation/world/world';
import { referencedId, resourcesOfType, type CfnResource } from '../support/template';

/**
 * The simulation runs the settings the stack deploys: its numbers for the functions' timeouts, the
 * relay's stream event source mapping and each consumer's queue, DLQ, event source mapping and
 * environment are read from a synthesized template and compared with the simulated world's, so a
 * change to lib/ that the simulation does not follow fails a test instead of drifting silently.
 */
interface MappingProps {
  EventSourceArn: unknown;
  FunctionName: unknown;
  BatchSize?: number;
  MaximumBatchingWindowInSeconds?: number;
  ScalingConfig?: { MaximumConcurrency?: number };
  FunctionResponseTypes?: string[];
  BisectBatchOnFunctionError?: boolean;
  MaximumRetryAttempts?: number;
  MaximumRecordAgeInSeconds?: number;
}

interface QueueProps {
  FifoQueue?: boolean;
  DeduplicationScope?: string;
  VisibilityTimeout?: number;
  MessageRetentionPeriod?: number;
  RedrivePolicy?: { maxReceiveCount?: number };
}

/** A synthesized template, read for what the simulation takes from it. */
export function stackSettings(template: Template) {
  const { Resources: resources, Outputs: outputs } = template.toJSON() as {
    Resources: Record<string, CfnResource>;
    Outputs: Record<string, { Value: unknown }>;
  };
  const mappings = resourcesOfType(template, 'AWS::Lambda::EventSourceMapping').map(
    ([, m]) => m.Properties as unknown as MappingProps,
  );
  const functionProps = (id: string) =>
    resources[id].Properties as { Timeout?: number; Environment?: { Variables?: Record<string, unknown> } };
  const streamMappings = mappings.filter(
    (m) => (m.EventSourceArn as { 'Fn::GetAtt'?: string[] })['Fn::GetAtt']?.[1] === 'StreamArn',
  );
  return { resources, outputs, mappings, functionProps, streamMappings };
}

/** The relay's stream mapping, as the simulated mapping runs it. */
export function expectRelayMappingSimulated(template: Template): void {
  const { streamMappings } = stackSettings(template);
  expect(streamMappings).toHaveLength(1);
  const mapping = streamMappings[0];

  expect({
    relayBatchSize: mapping.BatchSize,
    relayRetryAttempts: mapping.MaximumRetryAttempts,
    relayMaxRecordAgeSeconds: mapping.MaximumRecordAgeInSeconds,
    relayBisectOnFunctionError: mapping.BisectBatchOnFunctionError,
  }).toEqual({
    relayBatchSize: DEFAULT_SETTINGS.relayBatchSize,
    relayRetryAttempts: DEFAULT_SETTINGS.relayRetryAttempts,
    relayMaxRecordAgeSeconds: DEFAULT_SETTINGS.relayMaxRecordAgeSeconds,
    relayBisectOnFunctionError: DEFAULT_SETTINGS.relayBisectOnFunctionError,
  });
  // The simulated relay's answers are read as partial batch responses.
  expect(mapping.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
}

/** The relay's, the sweeper's and each consumer's timeouts, as the simulated functions are stopped at them. */
export function expectTimeoutsSimulated(template: Template, consumers: readonly ConsumerSpec[]): void {
  const { resources, mappings, functionProps, streamMappings } = stackSettings(template);
  const relay = referencedId(streamMappings[0].FunctionName)!;
  const consumerFunctions = mappings
    .filter((m) => resources[referencedId(m.EventSourceArn) ?? '']?.Type === 'AWS::SQS::Queue')
    .map((m) => referencedId(m.FunctionName)!);
  const sweepers = Object.keys(resources).filter(
    (id) =>
      resources[id].Type === 'AWS::Lambda::Function' &&
      functionProps(id).Environment?.Variables?.OUTBOX_SWEEP_AGE_SECONDS !== undefined,
  );

  expect(consumerFunctions).toHaveLength(consumers.length);
  expect(sweepers).toHaveLength(1);
  expect(functionProps(relay).Timeout).toBe(DEFAULT_SETTINGS.relayTimeoutSeconds);
  expect(functionProps(sweepers[0]).Timeout).toBe(DEFAULT_SETTINGS.sweeperTimeoutSeconds);
  expect(functionProps(sweepers[0]).Environment?.Variables?.OUTBOX_SWEEP_AGE_SECONDS).toBe(
    String(DEFAULT_SETTINGS.sweepAgeSeconds),
  );
  for (const consumer of consumerFunctions)
    expect(functionProps(consumer).Timeout).toBe(DEFAULT_SETTINGS.consumerTimeoutSeconds);
}

/** Each consumer's queue, DLQ, event source mapping and environment, as `world` simulates that consumer. */
export function expectConsumersSimulated(
  template: Template,
  world: { consumers: ReadonlyMap<string, SimConsumer> },
  consumers: readonly ConsumerSpec[],
): void {
  const { resources, outputs, mappings, functionProps } = stackSettings(template);
  for (const spec of consumers) {
    const names = consumerOutputNames(spec.name);
    const queueId = referencedId(outputs[names.queueUrl]?.Value)!;
    const queue = resources[queueId].Properties as QueueProps;
    const dlq = resources[referencedId(outputs[names.deadLetterQueueUrl]?.Value)!].Properties as QueueProps;
    const mapping = mappings.find((m) => referencedId(m.EventSourceArn) === queueId)!;
    const environment = functionProps(referencedId(mapping.FunctionName)!).Environment!.Variables!;
    const simulated = world.consumers.get(spec.name)!;

    expect({
      consumer: spec.name,
      fifo: queue.FifoQueue === true,
      deduplicationScope: queue.DeduplicationScope,
      visibilityTimeoutSeconds: queue.VisibilityTimeout,
      maxReceiveCount: queue.RedrivePolicy?.maxReceiveCount,
      retentionSeconds: queue.MessageRetentionPeriod,
      deadLetterRetentionSeconds: dlq.MessageRetentionPeriod,
      batchSize: mapping.BatchSize,
      batchingWindowSeconds: mapping.MaximumBatchingWindowInSeconds ?? 0,
      maxConcurrency: mapping.ScalingConfig?.MaximumConcurrency,
      inboxTtlSeconds: Number(environment.INBOX_TTL_SECONDS),
      // A consumer on the sequenced ledger has no horizon (its claims never expire): none in its environment.
      dedupeHorizonSeconds:
        environment.CONSUMER_LEDGER === 'sequenced' ? Infinity : Number(environment.DEDUPE_HORIZON_SECONDS),
      backoff: {
        baseSeconds: Number(environment[RETRY_ENV.baseSeconds]),
        capSeconds: Number(environment[RETRY_ENV.capSeconds]),
      },
      maxAttempts: spec.fifo ? Number(environment[RETRY_ENV.maxAttempts]) : undefined,
    }).toEqual({
      consumer: spec.name,
      fifo: simulated.queue.options.fifo,
      deduplicationScope: simulated.queue.options.deduplicationScope === 'messageGroup' ? 'messageGroup' : undefined,
      visibilityTimeoutSeconds: simulated.queue.options.visibilityTimeoutSeconds,
      maxReceiveCount: simulated.queue.options.maxReceiveCount,
      retentionSeconds: simulated.queue.options.retentionSeconds,
      deadLetterRetentionSeconds: simulated.deadLetterQueue.options.retentionSeconds,
      // The simulated pollers take the spec's numbers (world.ts: pollQueue).
      batchSize: simulated.spec.batchSize,
      batchingWindowSeconds: simulated.spec.batchingWindowSeconds,
      maxConcurrency: simulated.spec.maxConcurrency,
      inboxTtlSeconds: simulated.config.inboxTtlSeconds,
      dedupeHorizonSeconds: simulated.config.dedupeHorizonSeconds,
      backoff: simulated.config.backoff,
      maxAttempts: spec.fifo ? simulated.config.maxAttempts : undefined,
    });
  }
}
