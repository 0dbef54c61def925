import { PENDING_OUTBOX_INDEX } from '../../../lambdas/exactly-once/aws/outbox-table';
import type { TableStore } from '../../../test/simulation/contracts/port-contracts';
import { MemoryDynamoDb } from '../../../tools/simulation/memory-dynamodb';

export const ORDERS_TABLE = 'Orders';
export const EFFECTS_TABLE = 'Effects';
/** Powertools' idempotency records of POST /orders (keyed on `id`, as the stack declares it). */
export const IDEMPOTENCY_TABLE = 'Idempotency';

/** The tables the adapters use, with the keys and the sparse index the stack declares. */
export function createSimulatedTables(db: MemoryDynamoDb): void {
  db.createTable(ORDERS_TABLE, {
    hash: 'pk',
    range: 'sk',
    indexes: { [PENDING_OUTBOX_INDEX]: { hash: 'pendingShard', range: 'createdAt' } },
  });
  db.createTable(EFFECTS_TABLE, { hash: 'pk', range: 'sk' });
  db.createTable(IDEMPOTENCY_TABLE, { hash: 'id' });
}

export function memoryTableStore(): TableStore & { db: MemoryDynamoDb } {
  const db = new MemoryDynamoDb();
  createSimulatedTables(db);
  return { db, documents: db.asDocumentClient(), tables: { orders: ORDERS_TABLE, effects: EFFECTS_TABLE } };
}
