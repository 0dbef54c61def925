import {
  CreateTableCommand,
  DeleteTableCommand,
  DynamoDBClient,
  type CreateTableCommandInput,
} from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import { PENDING_OUTBOX_INDEX } from '@exactly-once/runtime/aws/outbox-table';
import type { BenchTables } from '@exactly-once/tools/bench/tables';

const S = 'S' as const;
const keys = (hash: string, range?: string): Pick<CreateTableCommandInput, 'KeySchema' | 'AttributeDefinitions'> => ({
  KeySchema: [
    { AttributeName: hash, KeyType: 'HASH' },
    ...(range ? [{ AttributeName: range, KeyType: 'RANGE' as const }] : []),
  ],
  AttributeDefinitions: [hash, ...(range ? [range] : [])].map((AttributeName) => ({ AttributeName, AttributeType: S })),
});

/**
 * A client for the DynamoDB Local the integration globalSetup started (test/support/dynamodb.ts has one
 * too, but that file reaches the example's stack: the bench's tests must not).
 */
export function benchTestClient(): DynamoDBClient {
  const endpoint = process.env.TEST_DYNAMODB_ENDPOINT;
  if (endpoint === undefined) throw new Error('TEST_DYNAMODB_ENDPOINT is not set: run through the integration project');
  return new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
}

/**
 * The four tables the bench writes to, as any stack of the mechanism has them, on DynamoDB Local under
 * fresh names, with no example behind them: an application's entity table (pk/sk, a stream, the
 * sweeper's pending index), the API's idempotency table (`id`), the consumers' effects table (pk/sk)
 * and the provider log (`idempotencyKey`).
 */
export async function createBenchTables(): Promise<{ tables: BenchTables; drop: () => Promise<void> }> {
  const client = benchTestClient();
  const suffix = randomUUID().slice(0, 8);
  const tables: BenchTables = {
    entities: `Entities-${suffix}`,
    idempotency: `Idempotency-${suffix}`,
    effects: `Effects-${suffix}`,
    providerLog: `ProviderLog-${suffix}`,
  };
  const entityKeys = keys('pk', 'sk');
  const inputs: CreateTableCommandInput[] = [
    {
      TableName: tables.entities,
      KeySchema: entityKeys.KeySchema,
      AttributeDefinitions: [
        ...entityKeys.AttributeDefinitions!,
        { AttributeName: 'pendingShard', AttributeType: S },
        { AttributeName: 'createdAt', AttributeType: S },
      ],
      StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_IMAGE' },
      GlobalSecondaryIndexes: [
        {
          IndexName: PENDING_OUTBOX_INDEX,
          KeySchema: [
            { AttributeName: 'pendingShard', KeyType: 'HASH' },
            { AttributeName: 'createdAt', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    },
    { TableName: tables.idempotency, ...keys('id') },
    { TableName: tables.effects, ...keys('pk', 'sk') },
    { TableName: tables.providerLog, ...keys('idempotencyKey') },
  ];
  for (const input of inputs) await client.send(new CreateTableCommand({ ...input, BillingMode: 'PAY_PER_REQUEST' }));
  return {
    tables,
    drop: async () => {
      for (const name of Object.values(tables)) await client.send(new DeleteTableCommand({ TableName: name }));
      client.destroy();
    },
  };
}
