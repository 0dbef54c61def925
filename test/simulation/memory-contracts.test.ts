import {
  describeLedgerContract,
  describeOrderOutboxContract,
  describeTryCounterContract,
} from './contracts/port-contracts';
import { memoryTableStore } from '../../tooling/shop/simulation/tables';

/** The in-memory DynamoDB under the real adapters passes the port contracts (DynamoDB Local: test/integration/port-contracts.test.ts). */
describeLedgerContract('in-memory DynamoDB', async () => memoryTableStore());
describeOrderOutboxContract('in-memory DynamoDB', async () => memoryTableStore());
describeTryCounterContract('in-memory DynamoDB', async () => memoryTableStore());
