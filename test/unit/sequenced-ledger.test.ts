import { MemoryDynamoDb } from '../../tools/simulation/memory-dynamodb';
import { sequencedLedgerCases } from '../support/sequenced-ledger-cases';

/**
 * The sequenced ledger (lambdas/exactly-once/aws/sequenced-ledger.ts) under the generic effect, on the
 * in-memory DynamoDB: the claim on the entity item, one conditional UpdateItem, judged from the old item.
 * The same cases run on DynamoDB Local in test/integration/sequenced-ledger.test.ts.
 */

const db = new MemoryDynamoDb();
db.createTable('effects', { hash: 'pk', range: 'sk' });
const documents = db.asDocumentClient();

sequencedLedgerCases({ documents: () => documents, tableName: () => 'effects', enforcesKeySize: false });
