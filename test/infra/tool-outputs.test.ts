import { STACK_OUTPUTS, consumerId, consumerOutputNames } from '@exactly-once/cdk/parts';
import { PROBE_STACK_CONSUMERS, probeStackTemplate } from '../exactly-once/fixtures/probe-stack';

/**
 * addToolOutputs writes the outputs `npm run dlq`, the proof kit and the local runtime find a stack's
 * parts by: a missing or misdirected one leaves a DLQ the tool cannot see or a run it cannot verify.
 */
type Outputs = Record<string, { Value: unknown }>;

test("every output a tool reads is in the stack, naming the mechanism's tables and queues", () => {
  // Arrange
  const outputs = (probeStackTemplate() as { Outputs: Outputs }).Outputs;
  const ref = (name: string) => (outputs[name]?.Value as { Ref?: string } | undefined)?.Ref;

  // Act
  const consumerOutputs = PROBE_STACK_CONSUMERS.map((c) => consumerOutputNames(c.name));

  // Assert
  for (const name of Object.values(STACK_OUTPUTS).filter((n) => n !== STACK_OUTPUTS.faultParameterName)) {
    expect(outputs).toHaveProperty([name]);
  }
  expect(ref(STACK_OUTPUTS.effectsTableName)).toMatch(/^StorageEffects/);
  expect(ref(STACK_OUTPUTS.providerLogTableName)).toMatch(/^StorageProviderLog/);
  expect(ref(STACK_OUTPUTS.relayFailureQueueUrl)).toMatch(/^OutboxRelayRelayFailures/);
  expect(ref(STACK_OUTPUTS.sweeperDlqUrl)).toMatch(/^OutboxRelaySweeperAsyncDlq/);
  for (const [consumer, names] of PROBE_STACK_CONSUMERS.map((c, i) => [c, consumerOutputs[i]] as const)) {
    const id = consumerId(consumer.name);
    expect(ref(names.queueUrl)).toMatch(new RegExp(`^Pipelines${id}QueuesQueue`));
    expect(ref(names.deadLetterQueueUrl)).toMatch(new RegExp(`^Pipelines${id}QueuesDlq`));
    expect(outputs[names.dedupeHorizonSeconds]?.Value).toMatch(/^\d+$/);
  }
});
