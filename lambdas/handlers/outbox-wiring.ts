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
  return {
    publisher: new SqsEventPublisher(sqsClient(), {
      fifoQueueUrl: requireEnv('FIFO_QUEUE_URL'),
      standardQueueUrl: requireEnv('STANDARD_QUEUE_URL'),
    }),
    outbox: new DynamoDbOutboxStore(dynamoDbDocumentClient(), ordersTable),
    now: () => new Date(),
  };
}
