import { MemoryDynamoDb } from '../../../tools/simulation/memory-dynamodb';
import { createSimulatedTables, EFFECTS_TABLE } from '../../../tools/simulation/world/tables';
import type { TableStore } from './port-contracts';

/** The port contracts' tables on the in-memory DynamoDB, keyed as the stack declares them (the outbox's table: `Orders`). */
export function memoryTableStore(): TableStore & { db: MemoryDynamoDb } {
  const db = new MemoryDynamoDb();
  createSimulatedTables(db, 'Orders');
  return { db, documents: db.asDocumentClient(), tables: { orders: 'Orders', effects: EFFECTS_TABLE } };
}
