import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { dynamoDbClient } from './clients';

/**
 * Powertools' DynamoDB persistence for idempotency records, on the process's client unless given one
 * (the simulation passes a simulated invocation's). Make one per idempotency config: one instance shared
 * between configs completes records under the wrong key prefix (Powertools 2.35.0, docs/pitfalls.md).
 *
 * @example The persistence of an idempotent POST (`idempotentCommand`)
 * ```ts
 * import { idempotencyStore } from '.';
 * import { requireEnv } from '../runtime';
 *
 * const persistenceStore = idempotencyStore(requireEnv('IDEMPOTENCY_TABLE_NAME'));
 * ```
 */
export function idempotencyStore(
  tableName: string,
  client: DynamoDBClient = dynamoDbClient(),
): DynamoDBPersistenceLayer {
  return new DynamoDBPersistenceLayer({ tableName, awsSdkV3Client: client });
}
