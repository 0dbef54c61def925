import { PENDING_OUTBOX_INDEX } from '@exactly-once/runtime/aws/outbox-table';
import type { MemoryDynamoDb } from '../memory-dynamodb';

/** The mechanism's effects table: the consumers' inbox claims and their ledgers' state. */
export const EFFECTS_TABLE = 'Effects';
/** Powertools' idempotency records of the idempotent API (keyed on `id`, as the stack declares it). */
export const IDEMPOTENCY_TABLE = 'Idempotency';

/**
 * The tables the mechanism's adapters use, with the keys and the sparse index the stack declares: the
 * domain's table that holds the outbox (`outboxTable`: its entities and their outbox items, pk and sk,
 * and the pending-outbox index the sweeper reads), the effects table and the idempotency table.
 */
export function createSimulatedTables(db: MemoryDynamoDb, outboxTable: string): void {
  db.createTable(outboxTable, {
    hash: 'pk',
    range: 'sk',
    indexes: { [PENDING_OUTBOX_INDEX]: { hash: 'pendingShard', range: 'createdAt' } },
  });
  db.createTable(EFFECTS_TABLE, { hash: 'pk', range: 'sk' });
  db.createTable(IDEMPOTENCY_TABLE, { hash: 'id' });
}
