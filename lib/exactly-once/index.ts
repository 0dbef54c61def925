/**
 * Exactly-once effects over at-least-once delivery: the CDK half of the mechanism.
 *
 * One construct per concern: {@link FunctionWithDefaults} (every Lambda default), {@link ConsumerPipelines}
 * (a queue, DLQ, event source and alarms per consumer spec), {@link OutboxRelay} (the stream
 * relay and the sweeper), {@link Monitoring} (alarms that notify, a dashboard), and the correctness
 * Aspects that refuse at synth a setting that would break exactly-once ({@link applyCorrectnessAspects}).
 * An application's stack composes them, adds the grants where two of them meet ({@link grantOutboxPublishing})
 * and the outputs the tools read ({@link addToolOutputs}).
 *
 * This is the public surface: an application's CDK code imports the mechanism from here only (a lint
 * rule holds it to that). Nothing here imports an application, and nothing here loads Lambda code:
 * functions name their handler module by path.
 *
 * @example The composition an application's stack writes (the shop's is lib/shop/shop-stack.ts)
 * ```ts
 * const pipelines = new ConsumerPipelines(this, 'Pipelines', { consumers: CONSUMERS, producedTypes, effectsTableName, ... });
 * const outbox = new OutboxRelay(this, 'OutboxRelay', { outboxTable: table, entityPartitionPrefix: 'ORDER#', routes: outboxRoutes(pipelines.all) });
 * grantOutboxPublishing(outbox, pipelines.all, table);
 * addToolOutputs(this, { stage, humanRolePatterns, apiUrl: api.api.url, effectsTable, providerLogTable, pipelines: pipelines.all, outbox });
 * applyCorrectnessAspects(this);
 * ```
 */

export {
  bundleDefines,
  entryPointPath,
  functionBuildOf,
  FunctionWithDefaults,
  lambdaBundling,
  METRICS_NAMESPACE,
  PROJECT_DIR,
  serviceName,
  setFunctionBuild,
  type FunctionBuild,
  type FunctionWithDefaultsProps,
} from './function-defaults';
export { ConsumerPipelines, REDRIVE_ALLOWANCE, type ConsumerPipeline, type PipelinesProps } from './consumer-pipelines';
export {
  PROVIDERS_CONTEXT,
  providerEndpointsOf,
  type ProviderEndpoint,
  type ProviderEndpoints,
} from './provider-endpoints';
export { OutboxRelay, RELAY_ENTRY, SWEEPER_ENTRY, type OutboxRelayProps } from './outbox-relay';
export { grantOutboxPublishing, outboxRoutes, type OutboxPublishingOptions } from './outbox-wiring';
export { allowOnlySenders, ONLY_PRODUCERS_SEND_SID } from './queue-senders';
export { addToolOutputs, type ToolOutputsProps } from './tool-outputs';
export { Monitoring, type AlarmOptions, type MonitoringProps, type RunbookSection } from './monitoring';
export { FAULT_TARGET_TAG, FaultInjectionSwitch, tagFaultTarget } from './fault-injection';
export { QueueWithDlq, type QueueWithDlqProps } from './queue-with-dlq';
export {
  deadLetterQueueProps,
  DEFAULT_SOURCE_RETENTION,
  defaultQueueProps,
  DLQ_RETENTION,
  sourceQueueProps,
} from './queue-defaults';
export { defaultLogGroupProps } from './log-group-defaults';
export { GATEWAY_ERRORS, IamRestApi, type IamRestApiProps } from './iam-rest-api';
export { grantIndexActions, grantTableActions } from './grants';
export * from './aspects';

// The runtime's data the stack needs at synth (no Lambda code: these modules hold constants and types).
export {
  consumerId,
  consumerOutputNames,
  validateConsumerSpecs,
  type ConsumerSpec,
} from '../../lambdas/exactly-once/consumer-spec';
export { ENV } from '../../lambdas/exactly-once/env-names';
export { STACK_OUTPUTS } from '../../lambdas/exactly-once/stack-outputs';
export { INBOX_TTL_ATTRIBUTE } from '../../lambdas/exactly-once/aws/inbox-table';
export { ENTITY_OUTBOX, OUTBOX_TTL_ATTRIBUTE, PENDING_OUTBOX_INDEX } from '../../lambdas/exactly-once/aws/outbox-table';
// The caller rule, validated at synth so a pattern the API functions would refuse fails `cdk synth`.
export {
  callerRule,
  CallerRuleError,
  DEFAULT_HUMAN_ROLE_PATTERNS,
  parseHumanRolePatterns,
  type CallerRule,
} from '../../lambdas/exactly-once/api/caller';
export {
  ExactlyOnce,
  IDEMPOTENCY_EXPIRY_ATTRIBUTE,
  type ApiMonitoringOptions,
  type ExactlyOnceProps,
} from './exactly-once';
