import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * One client per process, created at cold start and reused by every
 * invocation. The SDK reads `AWS_ENDPOINT_URL_DYNAMODB` itself, which is how
 * the local runtime points functions at DynamoDB Local.
 */
let dynamoDb: DynamoDBClient | undefined;
let documentClient: DynamoDBDocumentClient | undefined;

/**
 * The process's DynamoDB client, for libraries that take the low-level client.
 *
 * @example Powertools' idempotency persistence (`idempotencyStore`)
 * ```ts
 * import { dynamoDbClient } from '.';
 *
 * new DynamoDBPersistenceLayer({ tableName, awsSdkV3Client: dynamoDbClient() });
 * ```
 */
export function dynamoDbClient(): DynamoDBClient {
  dynamoDb ??= new DynamoDBClient({});
  return dynamoDb;
}

/**
 * The process's DynamoDB document client, on the same client; undefined attributes are dropped
 * when items are written.
 *
 * @example An application's repository, on the process's client
 * ```ts
 * import { dynamoDbDocumentClient } from '.';
 * import { requireEnv } from '../runtime';
 *
 * const orders = new DynamoDbOrderRepository(dynamoDbDocumentClient(), requireEnv('ORDERS_TABLE_NAME'));
 * ```
 */
export function dynamoDbDocumentClient(): DynamoDBDocumentClient {
  documentClient ??= DynamoDBDocumentClient.from(dynamoDbClient(), {
    marshallOptions: { removeUndefinedValues: true },
  });
  return documentClient;
}

let sqs: SQSClient | undefined;

/**
 * The SQS client. When `AWS_ENDPOINT_URL_SQS` is set (the local runtime), it is
 * passed as the explicit endpoint: otherwise SDK v3 sends each call to the
 * host in the QueueUrl, which for fauxqs (`sqs.<region>.localhost`) does not
 * resolve. On AWS the variable is unset and nothing changes.
 *
 * @example A consumer's wiring on the process's clients (what deployedConsumerWiring builds)
 * ```ts
 * import { dynamoDbDocumentClient, sqsClient } from '.';
 * import { consumerConfigFromEnv, consumerWiring } from '../testing';
 *
 * const wiring = consumerWiring(consumerConfigFromEnv({ consumer: 'loyalty', fifo: false }), {
 *   documents: dynamoDbDocumentClient(),
 *   sqs: sqsClient(),
 * });
 * ```
 */
export function sqsClient(): SQSClient {
  sqs ??= new SQSClient(process.env.AWS_ENDPOINT_URL_SQS ? { endpoint: process.env.AWS_ENDPOINT_URL_SQS } : {});
  return sqs;
}
