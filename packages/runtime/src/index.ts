/**
 * Exactly-once effects over at-least-once delivery: the runtime half of the mechanism.
 *
 * An application writes its state change and an outbox item in one transaction; the relay and the
 * sweeper (this folder's `wiring/*-handler.ts`, deployed by `OutboxRelay` in packages/cdk/src) move
 * outbox items to each consumer's queue; a consumer built with {@link queueConsumerHandler} applies
 * each event once per `eventId`: its effect joins the inbox claim's transaction (an
 * {@link InboxLedger} subclass), and its provider call follows under the key
 * {@link providerKey} recorded on the claim ({@link callProviderIfOwed}).
 *
 * This is the public surface an application writes against: the handler factories, the consumer spec,
 * the envelope and its schema, the inbox ledger to extend, the provider port and the errors a consumer
 * throws. The rest is in subpath modules, as Powertools splits its packages: `exactly-once/aws` (the
 * AWS adapters: clients, the outbox item, the entity-effect ledger, the HTTP and recording providers),
 * `exactly-once/api` (the idempotent HTTP API's key, caller rule and responses), `exactly-once/runtime`
 * (configuration, environment names, logger and metrics) and `exactly-once/testing` (the wiring on
 * clients of a test's own). A lint rule holds an application to these five modules. Nothing here
 * imports an application. The handler modules of the relay and the sweeper are not exported: they
 * build their handler when they load.
 *
 * @example A consumer's entry module (a factory): parse, apply one use case under the inbox, report failures per record
 * ```ts
 * import { deployedConsumerWiring, parseEnvelope, queueConsumerHandler, applyEntityEffect, type ConsumerWiring } from '@exactly-once/runtime';
 * import { DynamoDbEntityEffectLedger } from '@exactly-once/runtime/aws';
 * import { consumerSpec } from '../consumers';
 *
 * const SPEC = consumerSpec('audit');
 * export function makeHandler(wiring: ConsumerWiring) {
 *   const ledger = new DynamoDbEntityEffectLedger(wiring.documents, wiring.ledgerOptions);
 *   const provider = wiring.provider(SPEC.name);
 *   return queueConsumerHandler(wiring, {
 *     fifo: SPEC.fifo,
 *     parse: parseEnvelope,
 *     apply: (event, _record, work) =>
 *       applyEntityEffect(event, { consumer: SPEC.name, eventTypes: SPEC.eventTypes, ledger, provider }, work),
 *   });
 * }
 * export function partsFromEnv(): ConsumerWiring {
 *   return deployedConsumerWiring(SPEC);
 * }
 * ```
 *
 * @example Its deployed binding, a module of its own (`handlers/audit-consumer.ts`): the only code that reads the environment
 * ```ts
 * import { makeHandler, partsFromEnv } from '../entry-points/audit-consumer';
 *
 * export const handler = makeHandler(partsFromEnv());
 * ```
 */

// Handler factories: a queue consumer and an idempotent HTTP command
export { queueConsumerHandler, type QueueConsumer } from './consumer/queue-consumer';
export { deployedConsumerWiring, type ConsumerWiring } from './wiring/consumer-wiring';
export { idempotentCommand, type BodyResult } from './api/idempotent-command';

// The consumer spec
export { validateConsumerSpecs, type ConsumerSpec } from './consumer-spec';
export { providerKey } from './inbox/keys';

// The envelope and its schema
export { envelopeSchema, parseEnvelope, parseJsonBody, parseWith, type EventEnvelope } from './envelope';

// The inbox: the ledger to extend, the transaction an effect joins, the work of one record
export { EffectConditionFailed, InboxLedger, STALE, type TransactItem } from './aws/inbox-ledger';
export type { ApplyOutcome, LedgerResult, ProviderCallRecord } from './inbox/ports';
export { applyEntityEffect, type EntityEffectDeps } from './inbox/entity-effect';
export { DeadlineExceeded, ProviderCallInProgress, type RecordWork } from './consumer/record-work';

// The provider port: the call after the commit
export type { ExternalProvider } from './provider/provider';
export { callProviderIfOwed } from './provider/call-provider-if-owed';

// The errors a consumer throws
export { PermanentError, RetryLater } from './errors';
