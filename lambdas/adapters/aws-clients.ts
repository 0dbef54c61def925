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
