/**
 * One consumer of outbox events, as data. The list of them
 * (the application's consumer list) is the only place that says who consumes what; from
 * it the stack builds each consumer's queue and DLQ, event source mapping,
 * grants, alarms, dashboard widgets and outputs, the relay its routing, and the
 * proof kit and the simulation discover the queues and check the invariants.
 *
 * @example One entry of an application's list
 * ```ts
 * import type { ConsumerSpec } from '../exactly-once';
 *
 * const loyalty: ConsumerSpec = {
 *   name: 'loyalty',
 *   fifo: false,
 *   eventTypes: ['OrderPlaced'],
 *   entry: 'lambdas/my-app/entry-points/loyalty-consumer.ts',
 *   providers: ['mail'],
 *   batchSize: 10,
 *   batchingWindowSeconds: 1,
 *   maxConcurrency: 10,
 * };
 * ```
 */
export interface ConsumerSpec {
  /**
   * Lower-case letters, digits and hyphens. Everything named after the consumer
   * derives from it, so nothing can drift: the inbox key prefix
   * (`INBOX#<name>#<eventId>`), the provider key (`<name>:<eventId>`, or `<name>@<tenant hash>:<eventId>`), the
   * metrics dimension, the construct id and the output names.
   */
  readonly name: string;
  /**
   * FIFO: one entity's events in order (group = entityId), one batch per group at a time.
   * Standard: parallel and unordered; the consumer must not care about order.
   */
  readonly fifo: boolean;
  /** The envelope types the relay routes to this consumer; anything else it receives is dead-lettered. */
  readonly eventTypes: readonly string[];
  /**
   * Its Lambda entry: the module (relative to the project root) that exports the consumer's
   * `handler` and its `makeHandler(wiring)` (the simulation builds the consumer with it).
   */
  readonly entry: string;
  /**
   * The external providers its effect calls (`wiring.provider(name)`), by name. Each is configured per
   * stage with an endpoint and an API-key parameter (`ConsumerPipelines` prop `providers`); one that
   * is not configured is the recording test double (the provider log table).
   * @default none
   */
  readonly providers?: readonly string[];
  readonly batchSize: number;
  /** 0 for FIFO: FIFO event sources take no batching window. */
  readonly batchingWindowSeconds: number;
  /** The event source mapping's maximum concurrency (2-1000). */
  readonly maxConcurrency: number;
}

const NAME = /^[a-z][a-z0-9-]{0,30}[a-z0-9]$/;

/**
 * `fulfilment` -> `Fulfilment`, `gift-cards` -> `GiftCards`: construct ids and output names.
 *
 * @example
 * ```ts
 * const queues = new QueueWithDlq(this, `${consumerId(spec.name)}Queues`, { fifo: spec.fifo, visibilityTimeout, maxReceiveCount });
 * ```
 */
export const consumerId = (name: string): string =>
  name
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');

/**
 * The stack outputs of a consumer's queue and DLQ, by which tools find them (`addToolOutputs` writes them).
 *
 * @example The DLQ tool finds a consumer's DLQ in the stack's outputs
 * ```ts
 * const dlqUrl = outputs[consumerOutputNames('fulfilment').deadLetterQueueUrl]; // FulfilmentDlqUrl
 * ```
 */
export const consumerOutputNames = (name: string) => ({
  queueUrl: `${consumerId(name)}QueueUrl`,
  deadLetterQueueUrl: `${consumerId(name)}DlqUrl`,
  /** The consumer's dedupe horizon in seconds: the DLQ tool judges a message's age by it. */
  dedupeHorizonSeconds: `${consumerId(name)}DedupeHorizonSeconds`,
});

/** The provider key is built in inbox/keys.ts (with the event's tenant); re-exported here for the tools that import it from the spec. */
export { providerKey } from './inbox/keys';

/**
 * Refuses a list the stack cannot build correctly, with a one-line reason:
 * a bad or repeated name, an event type nobody produces, a FIFO batching
 * window, settings outside what SQS event sources accept.
 *
 * @example An application checks its list when the module loads
 * ```ts
 * import { type ConsumerSpec, validateConsumerSpecs } from '../exactly-once';
 *
 * export const CONSUMERS = [fulfilment, loyalty] as const satisfies readonly ConsumerSpec[];
 * validateConsumerSpecs(CONSUMERS, ORDER_EVENT_TYPES);
 * ```
 */
export function validateConsumerSpecs(specs: readonly ConsumerSpec[], producedTypes: readonly string[]): void {
  const seen = new Set<string>();
  for (const spec of specs) {
    const where = `consumer "${spec.name}"`;
    if (!NAME.test(spec.name))
      throw new Error(`${where}: a name is 2-32 lower-case letters, digits and hyphens, starting with a letter`);
    if (seen.has(spec.name)) throw new Error(`${where}: the name is used twice`);
    seen.add(spec.name);
    if (spec.eventTypes.length === 0) throw new Error(`${where}: takes no event type`);
    for (const type of spec.eventTypes)
      if (!producedTypes.includes(type))
        throw new Error(`${where}: takes "${type}", which no producer writes (known: ${producedTypes.join(', ')})`);
    if (spec.fifo && spec.batchingWindowSeconds !== 0)
      throw new Error(`${where}: FIFO event sources take no batching window (set 0)`);
    if (!Number.isInteger(spec.batchSize) || spec.batchSize < 1 || spec.batchSize > 10)
      throw new Error(`${where}: batchSize must be 1-10 (the consumers report partial failures per batch)`);
    if (
      !Number.isInteger(spec.batchingWindowSeconds) ||
      spec.batchingWindowSeconds < 0 ||
      spec.batchingWindowSeconds > 300
    )
      throw new Error(`${where}: batchingWindowSeconds must be 0-300`);
    if (!Number.isInteger(spec.maxConcurrency) || spec.maxConcurrency < 2 || spec.maxConcurrency > 1000)
      throw new Error(`${where}: maxConcurrency must be 2-1000 (the event source mapping's range)`);
    const providers = spec.providers ?? [];
    for (const provider of providers)
      if (!NAME.test(provider))
        throw new Error(`${where}: provider "${provider}": a name is 2-32 lower-case letters, digits and hyphens`);
    if (new Set(providers).size !== providers.length) throw new Error(`${where}: a provider is named twice`);
  }
}
