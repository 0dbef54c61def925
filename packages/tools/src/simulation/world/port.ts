import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { apiEvent } from '@exactly-once/runtime/testing';
import type { ConsumerConfig } from '@exactly-once/runtime/wiring/consumer-wiring';
import type { ConsumerSpec } from '@exactly-once/runtime/consumer-spec';
import type { EventEnvelope } from '@exactly-once/runtime/envelope';
import type { ProofDomain } from '../../proof-kit/domain';
import type { PlannedRequest } from '../../proof-kit/plan';
import type { MemoryDynamoDb } from '../memory-dynamodb';
import type { HandlerFactory } from './consumers';
import type { Invocation } from './invocation';
import type { SimulationOptions } from './options';
import type { SimQueue } from './sqs';
import type { World } from './world';

/**
 * The plug-in port: what a domain gives the engine (SimulationDomain) and what its clients use of it
 * (an idempotent POST's client and request, DomainClients).
 */

/**
 * What a domain gives the simulation: its consumers and events, the table holding its outbox, its
 * clients (how intents become requests to its API), how to forge one of its events, its entities for
 * the proof kit's invariants, and its own guards. Everything else (virtual time, the queues and the
 * stream, the relay and the sweeper, the consumers and their providers, the faults, the mechanism's
 * invariants) is the engine's. The neutral probe domain's: PROBE_DOMAIN in test/simulation/probe-world.ts.
 */
export interface SimulationDomain<O extends SimulationOptions = SimulationOptions> {
  /** The consumers the world deploys (by default) and the event types the producers write. */
  readonly consumers: readonly ConsumerSpec[];
  readonly eventTypes: readonly string[];
  /** The domain's table holding its entities and their outbox items, and its entities' partition-key prefix. */
  readonly outboxTable: string;
  readonly entityPartitionPrefix: string;
  /** The domain's clients on this world: `start(index)` sends intent `index`; `entityIdOf` names its entity. */
  clients(world: World<O>): DomainClients;
  /** The `forgedFirst` fault: the same event (same eventId) with other content its consumers still accept. */
  forge(event: EventEnvelope): EventEnvelope;
  /** The domain's entities as stored, for the proof kit's invariants. */
  entities(db: MemoryDynamoDb): Record<string, unknown>[];
  /** The domain's own guards switched off: conditions the in-memory DynamoDB ignores (undefined: none). */
  conditionsIgnored?(options: O): ((table: string, key: Record<string, unknown>) => boolean) | undefined;
  /**
   * How the proof kit judges this domain's runs, for the world's consumer list (its invariants may
   * depend on who consumes what). Required: the engine is handed no other domain to judge by.
   */
  proof(consumers: readonly ConsumerSpec[]): ProofDomain;
}

/** The request API Gateway hands the function for an idempotent POST: IAM-signed by `userArn`, the key in its header. */
export function idempotentPostEvent(
  userArn: string,
  key: string,
  path: string,
  body: Record<string, unknown>,
): APIGatewayProxyEvent {
  return apiEvent({
    method: 'POST',
    path,
    caller: userArn,
    headers: { 'Content-Type': 'application/json', 'Idempotency-Key': key },
    body: JSON.stringify(body),
  });
}

/** A client of the idempotent API: its caller, its key, its session (rotated credentials), its tries in flight. */
export interface ApiClient {
  readonly caller: string;
  readonly key: string;
  session: number;
  /** Chains of tries in flight or waiting to be retried. */
  chains: number;
  /** Answered 201 at least once. */
  created: boolean;
}

/** What one POST sends and how: the domain's deployed handler on the invocation's clients, its error classes. */
export interface ApiPost {
  /** The invocation's name prefix (`api-place`). */
  readonly kind: string;
  readonly path: string;
  readonly body: Record<string, unknown>;
  readonly timeoutSeconds: number;
  handler(invocation: Invocation): (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
  /** The status a thrown error stands for (no answer for a crash); an unexpected one is the domain's to record. */
  statusOf(error: unknown, who: string): number | 'no-response';
  /** The client is through with this chain of tries. */
  done(): void;
}

/**
 * Any other command of a client on its entity (a cancel, a refund), through the domain's own code:
 * the engine records it in the plan, runs it on an invocation of its own, traces it, observes its
 * answer and retries no answer or a 5xx (as a client does), then hands the final status to `done`.
 * `run` returns the domain's result and `answer` the status it stands for, so a plug-in writes only
 * what is its own.
 */
export interface ApiCommand<R> {
  /** The invocation's name prefix (`api-cancel`). */
  readonly kind: string;
  /** Its entry in the request plan (`cancel`). */
  readonly op: PlannedRequest['op'];
  readonly method: PlannedRequest['method'];
  readonly path: string;
  /** What the trace says was answered (`cancel of ord_…`). */
  readonly what: string;
  /** The domain's code on this invocation's clients, for the caller the API sees. */
  run(invocation: Invocation, caller: string): Promise<R>;
  /** The status a result stands for. */
  answer(result: R): number;
  /** The status a thrown error stands for (no answer for a crash); an unexpected one is the domain's to record. */
  statusOf(error: unknown, who: string): number | 'no-response';
  /** The final status, once no retry follows. */
  done(status: number | 'no-response'): void;
}

/** What the domain's clients give the world. */
export interface DomainClients {
  /** Starts intent `index` (at its arrival time): its requests, retries, later changes. */
  start(index: number): void;
  /** The entity a caller's intent under `key` must map to (the proof kit groups by it). */
  entityIdOf(caller: string, key: string): string;
}

/** One consumer of the list, simulated: its queue and DLQ as the stack configures them, its environment, its function. */
export interface SimConsumer {
  spec: ConsumerSpec;
  queue: SimQueue;
  deadLetterQueue: SimQueue;
  config: ConsumerConfig;
  makeHandler: HandlerFactory;
}
