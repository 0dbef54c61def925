import type { Message } from '@aws-sdk/client-sqs';
import type { ConsumerSpec } from '@exactly-once/runtime/consumer-spec';
import type { EntityItem, PerformedCall, ProofDomain } from './domain';
import type { Observation } from './observation';
import type { PlannedRequest } from './plan';

/**
 * What the invariants are judged on, as plain data: the run's requests and
 * answers, and what the tables and dead-letter queues hold after the drain.
 * The proof kit reads it from a stack; the simulation (test/simulation) builds
 * it from its in-memory world, so both are judged by the same checks. Its own module, types only:
 * verify.ts calls the judges (judge-intents.ts) that read it, so they import it from here.
 */
export interface RunFacts {
  /** Only entities of this run are judged; '' judges every entity in the stack (verify-only mode). */
  runId: string;
  /** False in verify-only mode: there are no observed 201s to hold the orders against. */
  checkIntents?: boolean;
  plan: readonly PlannedRequest[];
  observations: readonly Observation[];
  entityIdOf: (caller: string, key: string) => string;
  isPoison: (body: string) => boolean;
  pendingOutbox: number;
  /** Consumer metrics measured over the run (DuplicateSuppressed{consumer=...} etc.), where the target can measure them. */
  metrics?: Record<string, number>;
  /** The entities of this run, as the entity table holds them. */
  entities: EntityItem[];
  effectItems: Record<string, unknown>[];
  providerItems: Record<string, unknown>[];
  /** The effects the local provider performed (its log), where the target has one. */
  performedEffects?: PerformedCall[];
  /** Its endpoints that ignore the idempotency key. */
  keylessProviders?: string[];
  deadLetterQueues: { name: string; messages: Message[] }[];
  /** Who consumes what: the deployed list, or another a test judges. */
  consumers: readonly ConsumerSpec[];
  /** The domain judged. */
  domain: ProofDomain;
}
