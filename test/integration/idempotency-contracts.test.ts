import { describeIdempotencyStoreContract } from '../simulation/contracts/idempotency-contracts';
import { testDynamoDbClient, useEmulatorEnvironment } from '../support/emulated-dynamodb';
import { createEmulatedTables } from '../support/emulated-stack';

/** The same idempotency store contract the simulation's in-memory DynamoDB passes, here on DynamoDB Local with the Idempotency table of the mechanism's construct. */
describeIdempotencyStoreContract('DynamoDB Local', async () => {
  useEmulatorEnvironment();
  const tables = await createEmulatedTables();
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
