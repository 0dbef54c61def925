import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  describeLedgerContract,
  describeOrderOutboxContract,
  describeTryCounterContract,
} from '../simulation/contracts/port-contracts';
import { createStackTables, testDynamoDbClient, useEmulatorEnvironment } from '../support/dynamodb';

/** The same port contracts the simulation's in-memory DynamoDB passes, here on DynamoDB Local with the template's tables. */
async function emulatorStore() {
  useEmulatorEnvironment();
  const tables = await createStackTables();
  const documents = DynamoDBDocumentClient.from(testDynamoDbClient());
  return {
    documents,
    tables: { orders: tables.names.Orders, effects: tables.names.Effects },
    drop: async () => {
      documents.destroy();
      await tables.drop();
    },
  };
}

describeLedgerContract('DynamoDB Local', emulatorStore);
describeOrderOutboxContract('DynamoDB Local', emulatorStore);
describeTryCounterContract('DynamoDB Local', emulatorStore);
