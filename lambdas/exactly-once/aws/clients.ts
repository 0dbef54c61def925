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

export function dynamoDbClient(): DynamoDBClient {
  dynamoDb ??= new DynamoDBClient({});
  return dynamoDb;
}

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
 */
export function sqsClient(): SQSClient {
  sqs ??= new SQSClient(process.env.AWS_ENDPOINT_URL_SQS ? { endpoint: process.env.AWS_ENDPOINT_URL_SQS } : {});
  return sqs;
}
