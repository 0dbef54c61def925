import { describeOrderRepositoryContract } from './contracts/order-repository-contracts';
import { memoryTableStore } from './contracts/memory-tables';

/** The shop's order repository on the in-memory DynamoDB passes its contract (DynamoDB Local: test/integration/order-repository-contracts.test.ts). */
describeOrderRepositoryContract('in-memory DynamoDB', async () => memoryTableStore());
