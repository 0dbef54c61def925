import { dynamoDbDocumentClient, sqsClient } from '../adapters/aws-clients';
import { DynamoDbOutboxStore } from '../adapters/dynamodb-outbox-store';
import { SqsEventPublisher } from '../adapters/sqs-event-publisher';
import type { OrderEvent } from '../domain/events';
import type { EventPublisher, OutboxStore } from '../ports/outbox';
import { requireEnv } from '../shared/config';

/** Where both outbox publishers read and publish: the stack's environment, read once at cold start. */
export interface OutboxConfig {
  ordersTable: string;
  fifoQueueUrl: string;
  standardQueueUrl: string;
}

export function outboxConfigFromEnv(): OutboxConfig {
  return {
    ordersTable: requireEnv('ORDERS_TABLE_NAME'),
    fifoQueueUrl: requireEnv('FIFO_QUEUE_URL'),
    standardQueueUrl: requireEnv('STANDARD_QUEUE_URL'),
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
 * start: the Orders table's outbox and a publisher to the two queues.
 */
export function outboxWiring(config: OutboxConfig, deps: OutboxDependencies): OutboxWiring {
  const queues = { fifoQueueUrl: config.fifoQueueUrl, standardQueueUrl: config.standardQueueUrl };
  return {
    publisher: new SqsEventPublisher(deps.sqs, queues),
    publisherWith: (options) => new SqsEventPublisher(deps.sqs, queues, options),
    outbox: new DynamoDbOutboxStore(deps.documents, config.ordersTable),
    now: deps.now ?? (() => new Date()),
  };
}

export interface OutboxWiring {
  publisher: EventPublisher;
  /** Another publisher to the same queues, e.g. with other FIFO dedup ids (the resend fault). */
  publisherWith(options: { deduplicationId?: (event: OrderEvent) => string }): EventPublisher;
  outbox: OutboxStore;
  now: () => Date;
}
