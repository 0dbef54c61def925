import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { dynamoDbClient } from './aws-clients';

/**
 * Powertools' DynamoDB persistence for idempotency records. One instance per
 * idempotency config: sharing one between configs completes records under the
 * wrong key prefix (Powertools 2.35.0, README "Pitfalls worth knowing").
 */
export function idempotencyStore(tableName: string): DynamoDBPersistenceLayer {
  return new DynamoDBPersistenceLayer({ tableName, awsSdkV3Client: dynamoDbClient() });
}
