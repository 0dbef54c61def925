import { STACK_OUTPUTS, consumerOutputNames } from '../../lib/exactly-once/parts';
import { CONSUMERS } from '../../lambdas/shop/consumers';
import { defaultStackTemplate } from '../support/synth';

/**
 * addToolOutputs writes the outputs `npm run dlq`, the proof kit and the local runtime find a stack's
 * parts by: a missing or misdirected one leaves a DLQ the tool cannot see or a run it cannot verify.
 */
type Outputs = Record<string, { Value: unknown }>;

test("every output a tool reads is in the stack, naming the mechanism's tables and queues", () => {
  // Arrange
  const outputs = (defaultStackTemplate() as { Outputs: Outputs }).Outputs;
  const ref = (name: string) => (outputs[name]?.Value as { Ref?: string } | undefined)?.Ref;

  // Act
  const consumerOutputs = CONSUMERS.map((c) => consumerOutputNames(c.name));

  // Assert
  for (const name of Object.values(STACK_OUTPUTS).filter((n) => n !== STACK_OUTPUTS.faultParameterName)) {
    expect(outputs).toHaveProperty([name]);
  }
  expect(ref(STACK_OUTPUTS.effectsTableName)).toMatch(/^StorageEffects/);
  expect(ref(STACK_OUTPUTS.providerLogTableName)).toMatch(/^StorageProviderLog/);
  expect(ref(STACK_OUTPUTS.relayFailureQueueUrl)).toMatch(/^OutboxRelayRelayFailures/);
  expect(ref(STACK_OUTPUTS.sweeperDlqUrl)).toMatch(/^OutboxRelaySweeperAsyncDlq/);
  for (const [consumer, names] of CONSUMERS.map((c, i) => [c, consumerOutputs[i]] as const)) {
    const id = consumer.name.charAt(0).toUpperCase() + consumer.name.slice(1);
    expect(ref(names.queueUrl)).toMatch(new RegExp(`^Pipelines${id}QueuesQueue`));
    expect(ref(names.deadLetterQueueUrl)).toMatch(new RegExp(`^Pipelines${id}QueuesDlq`));
    expect(outputs[names.dedupeHorizonSeconds]?.Value).toMatch(/^\d+$/);
  }
});
