import { describeIdempotencyStoreContract } from '../simulation/contracts/idempotency-contracts';
import { createStackTables, testDynamoDbClient, useEmulatorEnvironment } from '../support/dynamodb';

/** The same idempotency store contract the simulation's in-memory DynamoDB passes, here on DynamoDB Local with the template's Idempotency table. */
describeIdempotencyStoreContract('DynamoDB Local', async () => {
  useEmulatorEnvironment();
  const tables = await createStackTables();
  const client = testDynamoDbClient();
  return {
    client,
    table: tables.names.Idempotency,
    drop: async () => {
      client.destroy();
      await tables.drop();
    },
  };
});
