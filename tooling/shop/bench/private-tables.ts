import {
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  type GlobalSecondaryIndexDescription,
} from '@aws-sdk/client-dynamodb';
import type { Tables } from './emulator-limit';

/**
 * Copies of the stack's tables (same keys, attribute types and global
 * indexes, on-demand) with **no stream**, for the parts of the bench that
 * write straight to DynamoDB Local. Written to the stack's own tables, the
 * emulator limit's orders went down the stream: the running relay and
 * consumers processed them (the bench's own ledgers had already claimed them)
 * while the limit was being measured and into the pipeline's run after it,
 * so the "limit" measured the emulator sharing the machine with a pipeline,
 * and the pipeline shared it with the limit's leftovers. With these copies
 * nothing but the bench touches what it writes.
 */
export interface PrivateTables {
  tables: Tables;
  /** The stack's name of a table, for a private copy's name (labels stay `orders`, `effects`, ...). */
  originalOf(name: string): string;
  drop(): Promise<void>;
}

export async function createPrivateTables(
  client: DynamoDBClient,
  stackTables: Tables,
  suffix: string,
): Promise<PrivateTables> {
  const copies = {} as Tables;
  const original = new Map<string, string>();
  const created: string[] = [];
  const drop = async () => {
    await Promise.all(created.map((name) => client.send(new DeleteTableCommand({ TableName: name }))));
  };
  try {
    for (const [role, name] of Object.entries(stackTables) as [keyof Tables, string][]) {
      const { Table: table } = await client.send(new DescribeTableCommand({ TableName: name }));
      if (table?.KeySchema === undefined || table.AttributeDefinitions === undefined)
        throw new Error(`bench: table ${name} has no key schema`);
      const copy = `${name}-${suffix}`;
      await client.send(
        new CreateTableCommand({
          TableName: copy,
          KeySchema: table.KeySchema,
          AttributeDefinitions: table.AttributeDefinitions,
          BillingMode: 'PAY_PER_REQUEST',
          GlobalSecondaryIndexes: table.GlobalSecondaryIndexes?.map(indexCopy),
        }),
      );
      created.push(copy);
      copies[role] = copy;
      original.set(copy, name);
    }
  } catch (error) {
    await drop().catch(() => undefined);
    throw error;
  }
  return { tables: copies, originalOf: (name) => original.get(name) ?? name, drop };
}

function indexCopy(index: GlobalSecondaryIndexDescription) {
  if (index.IndexName === undefined || index.KeySchema === undefined || index.Projection === undefined)
    throw new Error('bench: a global secondary index without a name, key schema or projection');
  return { IndexName: index.IndexName, KeySchema: index.KeySchema, Projection: index.Projection };
}
