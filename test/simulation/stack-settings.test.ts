import { CONSUMERS } from '../../lambdas/shop/consumers';
import { RETRY_ENV } from '../../lambdas/exactly-once/consumer/retry-budget';
import { consumerOutputNames } from '../../lambdas/exactly-once/consumer-spec';
import { synthStack } from '../support/synth';
import { referencedId, resourcesOfType, type CfnResource } from '../support/template';
import { DEFAULT_SETTINGS, simulationOptions, World } from '../../tooling/shop/simulation/world';

/**
 * The simulation runs the settings the stack deploys: its numbers for the
 * functions' timeouts, the relay's stream event source mapping and each
 * consumer's queue, DLQ, event source mapping and environment are read here
 * from the synthesized template, so a change to lib/ that the
 * simulation does not follow fails this test instead of drifting silently.
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

let resources: Record<string, CfnResource>;
let outputs: Record<string, { Value: unknown }>;
let mappings: MappingProps[];

beforeAll(() => {
  const { template } = synthStack();
  ({ Resources: resources, Outputs: outputs } = template.toJSON() as {
    Resources: Record<string, CfnResource>;
    Outputs: Record<string, { Value: unknown }>;
  });
  mappings = resourcesOfType(template, 'AWS::Lambda::EventSourceMapping').map(
    ([, m]) => m.Properties as unknown as MappingProps,
  );
});

const functionProps = (id: string) =>
  resources[id].Properties as { Timeout?: number; Environment?: { Variables?: Record<string, unknown> } };
const streamMapping = () => {
  const stream = mappings.filter(
    (m) => (m.EventSourceArn as { 'Fn::GetAtt'?: string[] })['Fn::GetAtt']?.[1] === 'StreamArn',
  );
  expect(stream).toHaveLength(1);
  return stream[0];
};

test("the relay's stream mapping settings are the simulated mapping's", () => {
  const mapping = streamMapping();

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
});

test("the relay's, the sweeper's and every consumer's timeouts are the simulated ones", () => {
  const relay = referencedId(streamMapping().FunctionName)!;
  const consumers = mappings
    .filter((m) => resources[referencedId(m.EventSourceArn) ?? '']?.Type === 'AWS::SQS::Queue')
    .map((m) => referencedId(m.FunctionName)!);
  const sweepers = Object.keys(resources).filter(
    (id) =>
      resources[id].Type === 'AWS::Lambda::Function' &&
      functionProps(id).Environment?.Variables?.OUTBOX_SWEEP_AGE_SECONDS !== undefined,
  );

  expect(consumers).toHaveLength(CONSUMERS.length);
  expect(sweepers).toHaveLength(1);
  expect(functionProps(relay).Timeout).toBe(DEFAULT_SETTINGS.relayTimeoutSeconds);
  expect(functionProps(sweepers[0]).Timeout).toBe(DEFAULT_SETTINGS.sweeperTimeoutSeconds);
  expect(functionProps(sweepers[0]).Environment?.Variables?.OUTBOX_SWEEP_AGE_SECONDS).toBe(
    String(DEFAULT_SETTINGS.sweepAgeSeconds),
  );
  for (const consumer of consumers)
    expect(functionProps(consumer).Timeout).toBe(DEFAULT_SETTINGS.consumerTimeoutSeconds);
});

test("each consumer's simulated queue, DLQ, pollers and environment are the stack's for that consumer", () => {
  const world = new World(simulationOptions({ seed: 1 }));

  for (const spec of CONSUMERS) {
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
      dedupeHorizonSeconds: Number(environment.DEDUPE_HORIZON_SECONDS),
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
});
