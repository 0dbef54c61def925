import { dynamoDbDocumentClient, sqsClient } from '../adapters/aws-clients';
import { DynamoDbOutboxStore } from '../adapters/dynamodb-outbox-store';
import { SqsEventPublisher } from '../adapters/sqs-event-publisher';
import { requireEnv } from '../shared/config';

/**
 * What both outbox publishers (the stream relay and the sweeper) build at cold
 * start: the Orders table's outbox and a publisher to the two queues.
 */
export function outboxWiring() {
  const ordersTable = requireEnv('ORDERS_TABLE_NAME');
  const queues = { fifoQueueUrl: requireEnv('FIFO_QUEUE_URL'), standardQueueUrl: requireEnv('STANDARD_QUEUE_URL') };
  return {
    publisher: new SqsEventPublisher(sqsClient(), queues),
    /** Another publisher to the same queues, e.g. with other FIFO dedup ids (the resend fault). */
    publisherWith: (options: ConstructorParameters<typeof SqsEventPublisher>[2]) =>
      new SqsEventPublisher(sqsClient(), queues, options),
    outbox: new DynamoDbOutboxStore(dynamoDbDocumentClient(), ordersTable),
    now: () => new Date(),
  };
}
