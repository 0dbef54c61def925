import {
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  type GlobalSecondaryIndexDescription,
} from '@aws-sdk/client-dynamodb';
import { IDEMPOTENCY_EXPIRY_ATTRIBUTE } from '@exactly-once/cdk/exactly-once';
import { STACK_OUTPUTS } from '@exactly-once/runtime/stack-outputs';
import type { CfnTemplate } from '../local-runtime/template/model';

/**
 * The stack's tables the bench writes to directly, by role: the entity table (the application's,
 * holding its outbox), the API's idempotency records, the consumers' inbox and effects, and the
 * provider log (the recording double's table, standing in for a provider's API).
 */
export interface BenchTables {
  entities: string;
  idempotency: string;
  effects: string;
  providerLog: string;
}

/**
 * The stack's tables, found from what any stack of the mechanism has: the entity table by the output
 * the example names (`proof.entityTableOutput`), the effects and provider log tables by the mechanism's
 * outputs, and the idempotency table in the template (the mechanism's: partition key `id`, TTL
 * `expiration`), by its logical id among the runtime's tables.
 */
export function stackTables(
  outputs: Readonly<Record<string, string>>,
  entityTableOutput: string,
  template: CfnTemplate | undefined,
  tablesByLogicalId: Readonly<Record<string, string>>,
): BenchTables {
  const output = (name: string) => {
    const value = outputs[name];
    if (value === undefined) throw new Error(`bench: the stack has no output ${name}`);
    return value;
  };
  const idempotency = Object.entries(template?.Resources ?? {}).find(
    ([, resource]) =>
      resource.Type === 'AWS::DynamoDB::Table' && isIdempotencyTable(resource.Properties as Record<string, unknown>),
  )?.[0];
  const idempotencyName = idempotency === undefined ? undefined : tablesByLogicalId[idempotency];
  if (idempotencyName === undefined)
    throw new Error("bench: no idempotency table (partition key `id`, TTL `expiration`) among the runtime's tables");
  return {
    entities: output(entityTableOutput),
    idempotency: idempotencyName,
    effects: output(STACK_OUTPUTS.effectsTableName),
    providerLog: output(STACK_OUTPUTS.providerLogTableName),
  };
}

function isIdempotencyTable(properties: Record<string, unknown> | undefined): boolean {
  const keys = properties?.KeySchema as { AttributeName: string; KeyType: string }[] | undefined;
  const ttl = properties?.TimeToLiveSpecification as { AttributeName?: string } | undefined;
  return (
    keys?.length === 1 &&
    keys[0].AttributeName === 'id' &&
    keys[0].KeyType === 'HASH' &&
    ttl?.AttributeName === IDEMPOTENCY_EXPIRY_ATTRIBUTE
  );
}

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
  tables: BenchTables;
  /** The stack's name of a table, for a private copy's name (labels stay `entities`, `effects`, ...). */
  originalOf(name: string): string;
  drop(): Promise<void>;
}

export async function createPrivateTables(
  client: DynamoDBClient,
  stackTables: BenchTables,
  suffix: string,
): Promise<PrivateTables> {
  const copies = {} as BenchTables;
  const original = new Map<string, string>();
  const created: string[] = [];
  const drop = async () => {
    await Promise.all(created.map((name) => client.send(new DeleteTableCommand({ TableName: name }))));
  };
  try {
    for (const [role, name] of Object.entries(stackTables) as [keyof BenchTables, string][]) {
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
