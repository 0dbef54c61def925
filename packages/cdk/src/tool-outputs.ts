import { CfnOutput, type Stack } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { consumerOutputNames, ledgerOf } from '@exactly-once/runtime/consumer-spec';
import { STACK_OUTPUTS } from '@exactly-once/runtime/stack-outputs';
import type { ConsumerPipeline } from './consumer-pipelines';
import type { FaultInjectionSwitch } from './fault-injection';
import type { OutboxRelay } from './outbox-relay';

/**
 * What the tools need to find in a stack's outputs.
 *
 * @example
 * ```ts
 * const outputs: ToolOutputsProps = { stage: 'dev', humanRolePatterns: [], apiUrl: api.api.url, effectsTable, providerLogTable, pipelines: pipelines.all, outbox };
 * ```
 */
export interface ToolOutputsProps {
  /** The stage (`dev`, `prod`): the tools say which stack they talk to. */
  readonly stage: string;
  /** The caller rule's human-role patterns (the proof kit derives its own caller by them). */
  readonly humanRolePatterns: readonly string[];
  /**
   * The REST API's URL (`RestApi.url`).
   *
   * @default - no ApiUrl output (a stack without an API: the proof kit says it has no output ApiUrl)
   */
  readonly apiUrl?: string;
  /** The effects table: the proof kit reads its claims and effects. */
  readonly effectsTable: dynamodb.ITable;
  /** The provider log: the proof kit counts the recording double's calls. */
  readonly providerLogTable: dynamodb.ITable;
  /** Every consumer pipeline: its queue and DLQ URLs, and its dedupe horizon (the DLQ tool). */
  readonly pipelines: readonly ConsumerPipeline[];
  /** The outbox relay: its on-failure queue and the sweeper's DLQ (the DLQ tool). */
  readonly outbox: OutboxRelay;
  /**
   * The fault-injection switch, when the stack has one.
   *
   * @default - no FaultParameterName output: the proof kit runs without in-function faults
   */
  readonly faultSwitch?: FaultInjectionSwitch;
}

/**
 * Writes the outputs by which `npm run dlq` and the proof kit find a stack's parts
 * (`STACK_OUTPUTS` and each consumer's `consumerOutputNames`): the stage and caller rule, the API URL,
 * the mechanism's tables, each consumer's queue, DLQ and dedupe horizon, the relay's failure queue, the
 * sweeper's DLQ and the fault switch. Without them the tools cannot see a DLQ to drain or a run to verify.
 * An application adds outputs of its own (its tables) beside these.
 *
 * @example
 * ```ts
 * addToolOutputs(this, { stage: config.stage, humanRolePatterns: config.humanRolePatterns, apiUrl: api.api.url,
 *   effectsTable: storage.effectsTable, providerLogTable: storage.providerLogTable, pipelines: pipelines.all, outbox });
 * ```
 */
export function addToolOutputs(stack: Stack, props: ToolOutputsProps): void {
  const output = (name: string, value: string) => new CfnOutput(stack, name, { value });
  output(STACK_OUTPUTS.stage, props.stage);
  output(STACK_OUTPUTS.humanRolePatterns, props.humanRolePatterns.join(','));
  if (props.apiUrl !== undefined) output(STACK_OUTPUTS.apiUrl, props.apiUrl);
  output(STACK_OUTPUTS.effectsTableName, props.effectsTable.tableName);
  output(STACK_OUTPUTS.providerLogTableName, props.providerLogTable.tableName);
  for (const { spec, queues, dedupe } of props.pipelines) {
    const names = consumerOutputNames(spec.name);
    output(names.queueUrl, queues.queue.queueUrl);
    output(names.deadLetterQueueUrl, queues.deadLetterQueue.queueUrl);
    // None for a sequenced consumer: it has no horizon, and the DLQ tool then judges no message past one.
    if (ledgerOf(spec) === 'inbox') output(names.dedupeHorizonSeconds, String(dedupe.horizonSeconds));
  }
  output(STACK_OUTPUTS.relayFailureQueueUrl, props.outbox.failureQueue.queueUrl);
  const sweeperDlq = props.outbox.sweeper.asyncDeadLetterQueue;
  if (sweeperDlq !== undefined) output(STACK_OUTPUTS.sweeperDlqUrl, sweeperDlq.queueUrl);
  if (props.faultSwitch !== undefined)
    output(STACK_OUTPUTS.faultParameterName, props.faultSwitch.parameter.parameterName);
}
