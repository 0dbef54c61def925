import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describeOrderRepositoryContract } from '../simulation/contracts/order-repository-contracts';
import { createStackTables, testDynamoDbClient, useEmulatorEnvironment } from '../support/dynamodb';

/** The same order repository contract the simulation's in-memory DynamoDB passes, here on DynamoDB Local with the shop's Orders table. */
describeOrderRepositoryContract('DynamoDB Local', async () => {
  useEmulatorEnvironment();
  const tables = await createStackTables();
  const documents = DynamoDBDocumentClient.from(testDynamoDbClient());
  return {
    documents,
    tables: { outbox: tables.names.Orders, effects: tables.names.Effects },
    drop: async () => {
      documents.destroy();
      await tables.drop();
    },
  };
});
