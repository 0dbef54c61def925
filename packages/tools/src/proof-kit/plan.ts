/**
 * The request plan: what the load generator sends, decided up front from the seed by the domain
 * (`ProofDomain.buildPlan`, packages/tools/src/proof-kit/domain.ts). Operations:
 * - new: a create under a new Idempotency-Key (the shop: a new order);
 * - retry-sequential: the same key and body again, after the first answered;
 * - retry-concurrent: the same key and body, sent right behind the first, so
 *   both are in flight at once (another connection picks it up);
 * - cancel: a change of an entity created earlier in the plan;
 * - read: a GET.
 */
export type Operation = 'new' | 'retry-sequential' | 'retry-concurrent' | 'cancel' | 'read';

export interface PlannedRequest {
  index: number;
  op: Operation;
  caller: string;
  method: 'GET' | 'POST';
  path: string;
  idempotencyKey?: string;
  /** The JSON body (a POST's): the domain's; it carries the run id. */
  body?: Record<string, unknown>;
  /** For a cancel or a read of an entity: the key that made the entity concerned. */
  entityKey?: string;
}

export interface Mix {
  new: number;
  retrySequential: number;
  retryConcurrent: number;
  cancel: number;
  read: number;
}

export const DEFAULT_MIX: Mix = { new: 0.6, retrySequential: 0.1, retryConcurrent: 0.1, cancel: 0.1, read: 0.1 };

export interface PlanOptions {
  /** How many new intents (a create under a new key): the plan's size, whatever the mix adds around them. */
  intents: number;
  mix: Mix;
  callers: string[];
  /**
   * How many distinct parties the intents come from (the shop's customers, the bookings' guests), and how
   * many resources they contend for (the shop's SKUs, the bookings' rooms; the hot-sku profile: 1). A
   * domain's plan reads the ones it has.
   */
  parties: number;
  resources: number;
  /** Every request body carries it, so the run's events and dead letters can be told from earlier traffic. */
  runId: string;
  /** Maps (caller, key) to the entity id the API will assign (deterministic by design). */
  entityIdOf: (caller: string, key: string) => string;
}
