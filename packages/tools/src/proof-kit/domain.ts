import type { EventEnvelope } from '@exactly-once/runtime/envelope';
import type { PerformedEffect } from '../local-runtime/provider';
import type { PlannedRequest, PlanOptions } from './plan';
import type { Random } from './random';

/**
 * What one provider did in a run, for its summary line (provider-calls.ts sums it up). Declared here, beside
 * the domain's `providerLine` that words it, since provider-calls.ts imports this module.
 */
export interface ProviderSummary {
  provider: string;
  /** It ignores the idempotency key: every call is a send, and `duplicates` is the residue. */
  keyless: boolean;
  /** Effects performed (an e-mail sent, an instruction taken). */
  performed: number;
  /** Effects performed more than once under one key: on a keyed provider, a bug; on a keyless one, the residue. */
  duplicates: number;
  /** Performed, but the answer never reached the caller (it timed out or the connection dropped). */
  answersLost: number;
  /** Requests the key turned into no new effect: replays and refusals while the key's first request ran. */
  absorbedByKey: number;
  /** What it performed, in its order of performance (a domain's line may count kinds of request in it). */
  effects: readonly PerformedEffect[];
}

/**
 * One broken invariant, naming the ids involved. The kit's own invariants are `orders` (every key that
 * got a 201 made exactly one entity: the name stays for the reports' sake), `replay`, `provider`,
 * `provider-order`, `provider-effects`, `dlq`, `outbox` and `each-event-once-per-consumer`; a domain
 * adds its own (the shop: `reserved`, `points`).
 */
export interface Violation {
  invariant: string;
  detail: string;
}

/**
 * An event the outbox produced, by what every consumer keys it on; with `event`, the whole event
 * rebuilt by the domain (any `occurredAt`), so the kit checks that each consumer's claim holds this
 * event's fingerprint and not another's under its id. Its `version` (given, or the rebuilt event's)
 * lets the kit judge a stale mark: an event counts as superseded only when a newer version of its
 * entity was produced. A domain that gives no version is judged more loosely (any other event of the
 * entity supersedes it).
 */
export type ProducedEvent = Pick<EventEnvelope, 'eventId' | 'type' | 'entityId' | 'tenant'> & {
  version?: number;
  event?: EventEnvelope;
};

/** An item of the entity table, as scanned: the domain reads its own fields. */
export type EntityItem = Record<string, unknown>;

/** What a domain's provider rules are judged on. */
export interface ProviderFacts {
  entities: readonly EntityItem[];
  /** The effects table's items by `pk`. */
  effects: ReadonlyMap<string, Record<string, unknown>>;
  /** The provider log, one item per key: `calls`, `firstCalledAt`, `lastCalledAt`. */
  log: ReadonlyMap<string, Record<string, unknown>>;
  /** Whether the consumer's inbox marks the event of this provider key superseded by a later event of its entity. */
  superseded(providerKey: string): boolean;
}

/** What the provider performed, as the domain's rules on it read it. */
export type PerformedCall = Pick<PerformedEffect, 'key' | 'seq' | 'payload' | 'endpoint'>;

/**
 * What the proof kit knows of a domain, given by the example (`proof` in its tooling module): the
 * requests a run sends, the entities they make, the events those produce and the invariants the effects
 * must meet. Everything else the kit judges (each event once per consumer, provider keys performed once,
 * dead letters, the outbox drained) holds for any domain and is the kit's own.
 *
 * Conventions the kit relies on: a plan puts the run id in every request body (`<runId>-...`) and the
 * events carry one of those fields (the shop's a customer id, the bookings' a guest id), so the run's
 * events and dead letters can be told from earlier traffic (an event that carries only ids is not
 * found: the redrive fault then seeds none of them); entity ids are a function of (caller,
 * Idempotency-Key); an event id starts with its entity's id (`<entityId>.<suffix>`).
 */
export interface ProofDomain {
  /** What the entities are called in the reports, plural (`orders`). */
  readonly entityNoun: string;
  /** The same, singular (`order`): the report's calls per entity. */
  readonly entityNounSingular: string;
  /** The stack output naming the table the API writes its entities to. */
  readonly entityTableOutput: string;
  /** Whether a scanned item of that table is an entity of run `runId` ('' = of any run). */
  isEntityOfRun(item: EntityItem, runId: string): boolean;
  /** An entity's id, from its table item or from the 201 answer that created it. */
  idOf(entity: EntityItem): string;
  /** The run's requests, decided up front from the seed. */
  buildPlan(random: Random, options: PlanOptions): PlannedRequest[];
  /** The id the API gives the entity a (caller, key) makes: deterministic by design. */
  entityIdOf(caller: string, key: string): string;
  /** The event an accepted create produces (the effect lag is measured from its acceptance). */
  createdEventIdOf(entityId: string): string;
  /** The events the outbox produced for these entities. */
  producedEvents(entities: readonly EntityItem[]): ProducedEvent[];
  /**
   * The domain's invariants on the effects: `effects` holds the effects table's items by `pk`. The
   * summary says what was checked, for the report (`8 cancelled; 40 SKUs, 30 customers`).
   */
  checkEffects(
    entities: readonly EntityItem[],
    effects: ReadonlyMap<string, Record<string, unknown>>,
  ): { violations: Violation[]; summary: string };
  /**
   * The domain's rules on provider calls, layered on the kit's (every owed key called once): the keys
   * its rules let go uncalled (`optional`), and its ordering rules over the provider log (one item per
   * key: `calls`, `firstCalledAt`, `lastCalledAt`). Default: none optional, no ordering rule.
   */
  providerRules?(facts: ProviderFacts): { optional: Set<string>; violations: Violation[] };
  /** The domain's rules on what a provider performed, in its order of performance. Default: none. */
  checkPerformed?(performed: readonly PerformedCall[]): Violation[];
  /**
   * The summary line of one provider's effects in a run (the local provider's log), or undefined for
   * the kit's: `provider <name>: N performed for M entities, D duplicates (keyed); ...`.
   */
  providerLine?(summary: ProviderSummary, entities: number): string | undefined;
  /**
   * For the `forged-first` fault: the event a planned create will produce, under its id but with other
   * content, stamped `occurredAt`; undefined for a request that creates nothing. Default: the domain
   * offers none, and the fault is refused.
   */
  forgedCreateEvent?(request: PlannedRequest, occurredAt: string): EventEnvelope | undefined;
  /** The entity an effect sent without a key belongs to, from its payload (so it is judged with its run). */
  entityOfPayload?(payload: Record<string, unknown>): string | undefined;
}

/**
 * The kit's provider line, for a domain's `providerLine` to reuse with its own words:
 * `provider mail: 120 performed for 120 placed orders, 0 duplicates (keyed); 3 answers lost, 41 retried calls absorbed by the key`.
 */
export function keyedProviderLine(s: ProviderSummary, performedFor: string): string {
  return `provider ${s.provider}: ${s.performed} performed for ${performedFor}, ${s.duplicates} duplicates (${s.keyless ? 'keyless' : 'keyed'}); ${s.answersLost} answers lost, ${s.absorbedByKey} retried calls absorbed by the key`;
}
