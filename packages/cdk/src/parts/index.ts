/**
 * The parts ExactlyOnce is built from (`packages/cdk/src/parts`), for a stack that composes them by
 * hand or reads them in a test: the consumer pipelines, the outbox relay, monitoring, the tool outputs,
 * the queue and log-group defaults, the fault switch, the grants and the correctness Aspects. An
 * application that uses ExactlyOnce needs none of them.
 *
 * @example A stack that builds the outbox relay itself
 * ```ts
 * import { OutboxRelay, outboxRoutes } from '@exactly-once/cdk/parts';
 *
 * const outbox = new OutboxRelay(this, 'OutboxRelay', { outboxTable, entityPartitionPrefix: 'ORDER#', routes: outboxRoutes(pipelines.all) });
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
} from '../function-defaults';
export {
  ConsumerPipelines,
  REDRIVE_ALLOWANCE,
  type ConsumerPipeline,
  type PipelinesProps,
} from '../consumer-pipelines';
export {
  PROVIDERS_CONTEXT,
  providerEndpointsOf,
  type ProviderEndpoint,
  type ProviderEndpoints,
} from '../provider-endpoints';
export { OutboxRelay, RELAY_ENTRY, SWEEPER_ENTRY, type OutboxRelayProps } from '../outbox-relay';
export { grantOutboxPublishing, outboxRoutes, type OutboxPublishingOptions } from '../outbox-wiring';
export {
  allowOnlyDeadLetterSenders,
  allowOnlySenders,
  ONLY_CONSUMER_DEAD_LETTERS_SID,
  ONLY_PRODUCERS_SEND_SID,
} from '../queue-senders';
export { addToolOutputs, type ToolOutputsProps } from '../tool-outputs';
export { Monitoring, type AlarmOptions, type MonitoringProps, type RunbookSection } from '../monitoring';
export { FAULT_TARGET_TAG, FaultInjectionSwitch, tagFaultTarget } from '../fault-injection';
export { QueueWithDlq, type QueueWithDlqProps } from '../queue-with-dlq';
export {
  deadLetterQueueProps,
  DEFAULT_SOURCE_RETENTION,
  defaultQueueProps,
  DLQ_RETENTION,
  sourceQueueProps,
} from '../queue-defaults';
export { defaultLogGroupProps } from '../log-group-defaults';
export { GATEWAY_ERRORS, IamRestApi, type IamRestApiProps } from '../iam-rest-api';
export { grantIndexActions, grantTableActions } from '../grants';
export * from '../aspects';

// The runtime's data the stack needs at synth (no Lambda code: these modules hold constants and types).
export {
  consumerId,
  consumerOutputNames,
  validateConsumerSpecs,
  type ConsumerSpec,
} from '@exactly-once/runtime/consumer-spec';
export { ENV } from '@exactly-once/runtime/env-names';
export { STACK_OUTPUTS } from '@exactly-once/runtime/stack-outputs';
export { INBOX_TTL_ATTRIBUTE } from '@exactly-once/runtime/aws/inbox-table';
export { ENTITY_OUTBOX, OUTBOX_TTL_ATTRIBUTE, PENDING_OUTBOX_INDEX } from '@exactly-once/runtime/aws/outbox-table';
// The caller rule, validated at synth so a pattern the API functions would refuse fails `cdk synth`.
export {
  callerRule,
  CallerRuleError,
  DEFAULT_HUMAN_ROLE_PATTERNS,
  parseHumanRolePatterns,
  type CallerRule,
} from '@exactly-once/runtime/api/caller';
export {
  ExactlyOnce,
  IDEMPOTENCY_EXPIRY_ATTRIBUTE,
  type ApiMonitoringOptions,
  type ExactlyOnceProps,
} from '../exactly-once';
