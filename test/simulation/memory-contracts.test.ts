import { describeLedgerContract, describeOutboxContract, describeTryCounterContract } from './contracts/port-contracts';
import { memoryTableStore } from './contracts/memory-tables';

/** The in-memory DynamoDB under the real adapters passes the port contracts (DynamoDB Local: test/integration/port-contracts.test.ts). */
describeLedgerContract('in-memory DynamoDB', async () => memoryTableStore('Things'));
describeOutboxContract('in-memory DynamoDB', async () => memoryTableStore('Things'));
describeTryCounterContract('in-memory DynamoDB', async () => memoryTableStore('Things'));
