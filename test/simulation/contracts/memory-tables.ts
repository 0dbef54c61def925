import { MemoryDynamoDb } from '@exactly-once/tools/simulation/memory-dynamodb';
import { createSimulatedTables, EFFECTS_TABLE } from '@exactly-once/tools/simulation/world/tables';
import type { TableStore } from './port-contracts';

/**
 * The port contracts' tables on the in-memory DynamoDB, keyed as the mechanism declares them; the
 * table that holds the outbox is `outboxTable` (the neutral fixture's is `Things`).
 */
export function memoryTableStore(outboxTable = 'Orders'): TableStore & { db: MemoryDynamoDb } {
  const db = new MemoryDynamoDb();
  createSimulatedTables(db, outboxTable);
  return { db, documents: db.asDocumentClient(), tables: { outbox: outboxTable, effects: EFFECTS_TABLE } };
}
