import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { MemoryDynamoDb } from '@exactly-once/tools/simulation/memory-dynamodb';
import { sequencedLedgerCases } from '../support/sequenced-ledger-cases';

/**
 * The sequenced ledger (packages/runtime/src/aws/sequenced-ledger.ts) under the generic effect, on the
 * in-memory DynamoDB: the claim on the entity item, one conditional UpdateItem, judged from the old item.
 * The same cases run on DynamoDB Local in test/integration/sequenced-ledger.test.ts.
 */

const db = new MemoryDynamoDb();
db.createTable('effects', { hash: 'pk', range: 'sk' });
const documents = db.asDocumentClient();

sequencedLedgerCases({
  documents: () => documents,
  // The in-memory table serves the low-level client's UpdateItem too (marshalled attributes in and out).
  raw: () => documents as unknown as DynamoDBClient,
  tableName: () => 'effects',
  enforcesKeySize: false,
});
