import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  describeLedgerContract,
  describeOutboxContract,
  describeTryCounterContract,
} from '../simulation/contracts/port-contracts';
import { testDynamoDbClient, useEmulatorEnvironment } from '../support/emulated-dynamodb';
import { createEmulatedTables } from '../support/emulated-stack';

/** The same port contracts the simulation's in-memory DynamoDB passes, here on DynamoDB Local with the tables of the mechanism's construct. */
async function emulatorStore() {
  useEmulatorEnvironment();
  const tables = await createEmulatedTables();
  const documents = DynamoDBDocumentClient.from(testDynamoDbClient());
  return {
    documents,
    tables: { outbox: tables.names.Things, effects: tables.names.Effects },
    drop: async () => {
      documents.destroy();
      await tables.drop();
    },
  };
}

describeLedgerContract('DynamoDB Local', emulatorStore);
describeOutboxContract('DynamoDB Local', emulatorStore);
describeTryCounterContract('DynamoDB Local', emulatorStore);
