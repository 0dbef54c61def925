import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import * as http from 'node:http';

/** The SDK's default of 50 sockets would queue requests in the bench itself at high concurrency, not in the emulator. */
const BENCH_REQUEST_HANDLER = { httpAgent: new http.Agent({ keepAlive: true, maxSockets: 256 }) };

/** A client for DynamoDB Local with the bench's socket pool (every bench client is made here). */
export function benchDynamoDbClient(endpoint: string, region: string): DynamoDBClient {
  return new DynamoDBClient({
    endpoint,
    region,
    credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
    requestHandler: BENCH_REQUEST_HANDLER,
  });
}
