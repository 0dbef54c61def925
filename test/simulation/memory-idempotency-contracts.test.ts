import { describeIdempotencyStoreContract } from './contracts/idempotency-contracts';
import { lowLevelClient } from '@exactly-once/tools/simulation/low-level-client';
import { IDEMPOTENCY_TABLE } from '@exactly-once/tools/simulation/world/tables';
import { memoryTableStore } from './contracts/memory-tables';

/** Powertools' persistence layer on the in-memory DynamoDB passes the idempotency store contract (DynamoDB Local: test/integration/idempotency-contracts.test.ts). */
describeIdempotencyStoreContract('in-memory DynamoDB', async () => {
  const { db } = memoryTableStore();
  return { client: lowLevelClient((command) => db.send(command)), table: IDEMPOTENCY_TABLE };
});
