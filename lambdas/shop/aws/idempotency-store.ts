import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { dynamoDbClient } from '../../exactly-once';

/**
 * Powertools' DynamoDB persistence for idempotency records. One instance per
 * idempotency config: sharing one between configs completes records under the
 * wrong key prefix (Powertools 2.35.0, docs/pitfalls.md).
 * The client is the process's own unless given (the simulation passes one
 * simulated invocation's).
 */
export function idempotencyStore(
  tableName: string,
  client: DynamoDBClient = dynamoDbClient(),
): DynamoDBPersistenceLayer {
  return new DynamoDBPersistenceLayer({ tableName, awsSdkV3Client: client });
}
