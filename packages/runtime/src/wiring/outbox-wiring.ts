import { dynamoDbDocumentClient, sqsClient } from '../aws/clients';
import { DynamoDbOutboxStore } from '../aws/dynamodb-outbox-store';
import { SqsEventPublisher } from '../aws/sqs-event-publisher';
import { parseRoutes, type ConsumerRoute } from '../outbox/routes';
import type { OutboxWiring } from '../outbox/ports';

export type { OutboxWiring } from '../outbox/ports';
import { requireEnv, requireIntEnv } from '../config';
import { ENV } from '../env-names';

/** Where both outbox publishers read and publish: the stack's environment, read once at cold start. */
export interface OutboxConfig {
  /** The table holding the outbox items. */
  outboxTable: string;
  /** The partition-key prefix of the entities whose partitions hold their outbox items. */
  entityPartitionPrefix: string;
  /** Every consumer's queue and the event types it takes. */
  routes: ConsumerRoute[];
  /** How long an outbox item is kept once dispatched (its TTL), in seconds. */
  dispatchedRetentionSeconds: number;
}

/** Throws at cold start on a missing table name, retention or missing or malformed routes, naming the variable. */
export function outboxConfigFromEnv(): OutboxConfig {
  return {
    outboxTable: requireEnv(ENV.outboxTable),
    entityPartitionPrefix: requireEnv(ENV.outboxEntityPartitionPrefix),
    routes: parseRoutes(requireEnv(ENV.consumerRoutes), ENV.consumerRoutes),
    dispatchedRetentionSeconds: requireIntEnv(ENV.outboxDispatchedRetentionSeconds),
  };
}

/** A deployed function's clients; the simulation passes one simulated invocation's, and its virtual clock. */
export interface OutboxDependencies {
  documents: ReturnType<typeof dynamoDbDocumentClient>;
  sqs: ReturnType<typeof sqsClient>;
  now?: () => Date;
}

/** A deployed publisher's wiring: its environment and AWS clients. */
export function deployedOutboxWiring(): OutboxWiring {
  return outboxWiring(outboxConfigFromEnv(), { documents: dynamoDbDocumentClient(), sqs: sqsClient() });
}

/**
 * What both outbox publishers (the stream relay and the sweeper) build at cold
 * start: the outbox table's store and a publisher to the consumers' queues.
 */
export function outboxWiring(config: OutboxConfig, deps: OutboxDependencies): OutboxWiring {
  return {
    publisher: new SqsEventPublisher(deps.sqs, config.routes),
    publisherWith: (options) => new SqsEventPublisher(deps.sqs, config.routes, options),
    outbox: new DynamoDbOutboxStore(
      deps.documents,
      config.outboxTable,
      config.entityPartitionPrefix,
      config.dispatchedRetentionSeconds,
    ),
    now: deps.now ?? (() => new Date()),
  };
}
