/**
 * One consumer of outbox events, as data. The list of them
 * (the application's consumer list) is the only place that says who consumes what; from
 * it the stack builds each consumer's queue and DLQ, event source mapping,
 * grants, alarms, dashboard widgets and outputs, the relay its routing, and the
 * proof kit and the simulation discover the queues and check the invariants.
 *
 * @example One entry of an application's list
 * ```ts
 * import type { ConsumerSpec } from '.';
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
   * FIFO: one entity's events in order (group = entityId, or the ordering key: `orderBy`), one batch per
   * group at a time. Standard: parallel and unordered; the consumer must not care about order.
   */
  readonly fifo: boolean;
  /**
   * FIFO only: what one message group is. `entity`: the envelope's `entityId`, so each entity's events
   * arrive in order. `ordering-key`: the envelope's `orderingKey` (its `entityId` when it has none), so
   * the events of several entities sharing a key arrive in one order (all payments of one account),
   * while each keeps its own entity and versions. The generic effect (`staleGuard: 'entity-version'`)
   * needs `entity`: validateConsumerSpecs refuses the pair.
   * @default 'entity'
   */
  readonly orderBy?: 'entity' | 'ordering-key';
  /**
   * How its effect treats an event older than the last one applied to its entity.
   * `entity-version`: it drops it as stale (the generic effect, applyEntityEffect, `npm run new:consumer`'s):
   * the versions it compares are the entity's, so the queue must deliver each entity's versions in
   * order, and validateConsumerSpecs refuses a spec that does not (a standard queue taking several
   * event types, or a FIFO ordered by something other than the entity).
   * @default none declared: the consumer's own effect decides, and says so in its docs
   */
  readonly staleGuard?: 'entity-version';
  /**
   * Where the consumer's claims live, so the stack, the proof kit and the simulation judge it by the right ones.
   * - `inbox`: an inbox item per event (`INBOX#<name>#<eventId>`) written in the effect's transaction. It
   *   expires after the inbox TTL, so the consumer refuses events older than its dedupe horizon. For an
   *   effect that is an aggregate over many events (the shop's loyalty points: one balance, credited by
   *   every order): no one item can hold every event's claim.
   * - `sequenced`: the claim lives on the event's own entity item, guarded by the entity's `version`
   *   (aws/sequenced-ledger.ts): one conditional UpdateItem instead of a transaction, and a claim that never
   *   expires, so the stack gives the consumer no dedupe horizon. For an effect on the event's own entity
   *   item (the generic effect; an order's reservation state). Older versions arriving after newer ones are
   *   acknowledged as stale, so validateConsumerSpecs holds it to the ordering rules of `staleGuard`.
   * @default 'inbox'
   * @example A consumer whose effect is one item per entity, and one whose effect is an aggregate
   * ```ts
   * const orderState: ConsumerSpec = { ...fifoSpec, name: 'order-state', ledger: 'sequenced' }; // one item per order
   * const loyalty: ConsumerSpec = { ...standardSpec, name: 'loyalty', ledger: 'inbox' }; // a sum over orders; or leave it out
   * ```
   */
  readonly ledger?: 'inbox' | 'sequenced';
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
 * window, settings outside what SQS event sources accept, a ledger the mechanism
 * does not have, and an ordering the effect cannot rely on (the generic effect's
 * version guard, or the sequenced ledger, on a standard queue taking several event
 * types, or on a FIFO ordered by ordering key).
 *
 * @example An application checks its list when the module loads
 * ```ts
 * import { type ConsumerSpec, validateConsumerSpecs } from '.';
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
    checkOrdering(spec, where);
  }
}

/** The ledgers a spec may name (ConsumerSpec.ledger). */
const LEDGERS: readonly string[] = ['inbox', 'sequenced'];

/**
 * The ledger a spec names, `inbox` when it names none.
 *
 * @example The stack gives a dedupe horizon only to a consumer whose claims expire
 * ```ts
 * if (ledgerOf(spec) === 'inbox') fn.addEnvironment(ENV.dedupeHorizonSeconds, String(dedupe.horizonSeconds));
 * ```
 */
export const ledgerOf = (spec: Pick<ConsumerSpec, 'ledger'>): 'inbox' | 'sequenced' => spec.ledger ?? 'inbox';

/**
 * The ordering a spec's effect relies on. The generic effect's version guard, and the sequenced ledger's
 * sequence condition, drop an event whose version is not above the entity's last applied one: events
 * that reach it out of their entity's order are not late, they are lost (judged stale, never applied,
 * no error anywhere).
 */
function checkOrdering(spec: ConsumerSpec, where: string): void {
  if (spec.orderBy !== undefined && spec.orderBy !== 'entity' && spec.orderBy !== 'ordering-key')
    throw new Error(`${where}: orderBy is 'entity' or 'ordering-key'`);
  if (spec.orderBy === 'ordering-key' && !spec.fifo)
    throw new Error(
      `${where}: orderBy 'ordering-key' names a FIFO message group; a standard queue has none (set fifo: true)`,
    );
  if (spec.ledger !== undefined && !LEDGERS.includes(spec.ledger))
    throw new Error(
      `${where}: ledger is 'inbox' (an inbox claim per event) or 'sequenced' (the claim on the event's entity item), not ${JSON.stringify(spec.ledger)}`,
    );
  if (spec.ledger === 'sequenced')
    checkEntityOrder(spec, where, "the sequenced ledger's sequence condition (ledger 'sequenced')");
  if (spec.staleGuard === undefined) return;
  if (spec.staleGuard !== 'entity-version') throw new Error(`${where}: staleGuard is 'entity-version' or absent`);
  checkEntityOrder(spec, where, "the generic effect's version guard (staleGuard 'entity-version')");
}

/** A guard that drops older versions as stale needs each entity's versions in order: `guard` names it. */
function checkEntityOrder(spec: ConsumerSpec, where: string, guard: string): void {
  if (!spec.fifo && spec.eventTypes.length > 1)
    throw new Error(
      `${where}: ${guard} on a standard queue that takes ` +
        `${spec.eventTypes.join(', ')}: a standard queue reorders, so an older version of an entity arriving after ` +
        'a newer one would be dropped as stale and never applied. Make it FIFO (fifo: true), or take one event type',
    );
  if (spec.orderBy === 'ordering-key')
    throw new Error(
      `${where}: ${guard} compares versions per entity, but ` +
        "this consumer is ordered by the envelope's orderingKey (orderBy 'ordering-key'): its versions are not per " +
        'ordering key, and an event judged against another entity of its group could be dropped as stale. Order it ' +
        "by entity (orderBy 'entity'), or give it an effect of its own whose versions are per ordering key (docs/adapting.md)",
    );
}
