/**
 * Exactly-once effects over at-least-once delivery: the runtime half of the mechanism.
 *
 * An application writes its state change and an outbox item in one transaction; the relay and the
 * sweeper (this folder's `wiring/*-handler.ts`, deployed by `OutboxRelay` in lib/exactly-once) move
 * outbox items to each consumer's queue; a consumer built with {@link queueConsumerHandler} applies
 * each event once per `eventId`: its effect joins the inbox claim's transaction (an
 * {@link InboxLedger} subclass), and its provider call follows under the key
 * `<consumer>:<eventId>` ({@link callProviderIfOwed}).
 *
 * This is the public surface: an application imports the mechanism from here only (a lint rule holds
 * it to that). Nothing here imports an application. The handler modules of the relay and the sweeper
 * are not exported: they build their handler when they load.
 *
 * @example A consumer's entry module: parse, apply one use case under the inbox, report failures per record
 * ```ts
 * import { deployedConsumerWiring, DynamoDbEntityEffectLedger, parseEnvelope, queueConsumerHandler, applyEntityEffect, type ConsumerWiring } from '../../exactly-once';
 * import { consumerSpec } from '../consumers';
 *
 * const SPEC = consumerSpec('audit');
 * export function makeHandler(wiring: ConsumerWiring) {
 *   const ledger = new DynamoDbEntityEffectLedger(wiring.documents, wiring.ledgerOptions);
 *   const provider = wiring.provider(SPEC.name);
 *   return queueConsumerHandler(wiring, {
 *     fifo: SPEC.fifo,
 *     parse: parseEnvelope,
 *     apply: (event, record, work) =>
 *       applyEntityEffect(event, { consumer: SPEC.name, eventTypes: SPEC.eventTypes, ledger: wiring.ledgerFor(ledger, record), provider }, work),
 *   });
 * }
 * export const handler = makeHandler(deployedConsumerWiring(SPEC));
 * ```
 */

// Events and errors
export { envelopeSchema, parseEnvelope, parseJsonBody, parseWith, type EventEnvelope } from './envelope';
export { PermanentError, RetryLater, retryAfterSecondsOf, type PermanentCause } from './errors';

// Consumers: the spec, the queue consumer and its wiring
export {
  consumerId,
  consumerOutputNames,
  providerKey,
  validateConsumerSpecs,
  type ConsumerSpec,
} from './consumer-spec';
export { STACK_OUTPUTS } from './stack-outputs';
export { queueConsumerHandler, type QueueConsumer, type QueueConsumerHandler } from './consumer/queue-consumer';
export {
  consumerConfigFromEnv,
  consumerWiring,
  deployedConsumerWiring,
  type ConsumerConfig,
  type ConsumerDependencies,
  type ConsumerWiring,
  type ProviderConfig,
} from './wiring/consumer-wiring';
export { DeadlineExceeded, ProviderCallInProgress, type RecordWork } from './consumer/record-work';

// The inbox: the claim and the transaction an effect joins
export {
  DEFAULT_PROVIDER_KEY_WINDOW_SECONDS,
  EffectConditionFailed,
  InboxLedger,
  PROVIDER_KEY_WINDOW_MARGIN_SECONDS,
  STALE,
  type LedgerOptions,
  type TransactItem,
} from './aws/inbox-ledger';
export type {
  ApplyOutcome,
  EntityEffectLedger,
  LedgerResult,
  ProviderCallLease,
  ProviderCallRecord,
} from './inbox/ports';
export { DynamoDbEntityEffectLedger } from './aws/entity-effect-ledger';
export { applyEntityEffect, type EntityEffectDeps } from './inbox/entity-effect';

// External providers: the call after the commit, its done-mark and its lease
export type { ExternalProvider } from './provider/provider';
export { callProviderIfOwed } from './provider/call-provider-if-owed';
export { HttpProvider, ProviderUnavailable, type ApiKeyHeader, type HttpProviderOptions } from './aws/http-provider';
export { API_KEY_CACHE_SECONDS, apiKeyFromParameter, type RefreshableApiKey } from './aws/parameter-api-key';
export { RecordingProvider } from './aws/recording-provider';

// The outbox item an application writes with its state change
export { ENTITY_OUTBOX, outboxItemKey, outboxPut, pendingShardOf } from './aws/outbox-table';

// The idempotent HTTP API: the key header, the request fingerprint, the caller scope, responses
export { MAX_IDEMPOTENCY_KEY_LENGTH, parseIdempotencyKey, type IdempotencyKeyResult } from './api/idempotency-key';
export { canonicalJson } from './runtime/canonical-json';
export {
  idempotentCommand,
  type BodyResult,
  type CommandInput,
  type IdempotentCommandOptions,
} from './api/idempotent-command';
export {
  callerPrincipal,
  callerRule,
  CallerRuleError,
  DEFAULT_CALLER_RULE,
  DEFAULT_HUMAN_ROLE_PATTERNS,
  parseHumanRolePatterns,
  type CallerIdentity,
  type CallerRule,
} from './api/caller';
export {
  callerOf,
  DEFAULT_RETRY_ADVICE,
  FORBIDDEN,
  headerValues,
  internalError,
  json,
  notFound,
  problem,
  serviceUnavailable,
  unexpectedErrorResponse,
  type HttpResponse,
  type Problem,
} from './api/http';

// Configuration, clients and observability
export { optionalEnv, optionalIntEnv, requireEnv, requireIntEnv } from './config';
export { ENV, providerEnvNames } from './env-names';
export { dynamoDbClient, dynamoDbDocumentClient, sqsClient } from './aws/clients';
export { idempotencyStore } from './aws/idempotency-store';
export { isContention, isDependencyFailure } from './aws/transient-errors';
export { flushMetrics, logger, metrics, MetricUnit } from './runtime/observability';
