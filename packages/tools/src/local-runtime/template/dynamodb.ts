import {
  CreateTableCommand,
  UpdateTimeToLiveCommand,
  type CreateTableCommandInput,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';

/** The parts of an AWS::DynamoDB::Table resource the local runtime reproduces. */
export interface TableDefinition {
  logicalId: string;
  /** The template's TableName, when it sets one. */
  tableName?: string;
  create: Omit<CreateTableCommandInput, 'TableName'>;
  ttlAttribute?: string;
}

type CfnResource = { Type: string; Properties?: Record<string, unknown> };
type CfnTemplate = { Resources: Record<string, CfnResource> };

/**
 * Reads every AWS::DynamoDB::Table of a synthesized template: keys, attribute
 * definitions, global and local secondary indexes, stream and TTL. Billing and
 * encryption settings mean nothing to DynamoDB Local and are ignored.
 */
export function tableDefinitions(template: CfnTemplate): TableDefinition[] {
  return Object.entries(template.Resources)
    .filter(([, r]) => r.Type === 'AWS::DynamoDB::Table')
    .map(([logicalId, r]) => {
      const p = r.Properties ?? {};
      const gsis = p.GlobalSecondaryIndexes as Record<string, unknown>[] | undefined;
      const lsis = p.LocalSecondaryIndexes as Record<string, unknown>[] | undefined;
      const stream = p.StreamSpecification as { StreamViewType: string } | undefined;
      const ttl = p.TimeToLiveSpecification as { AttributeName: string; Enabled: boolean } | undefined;
      return {
        logicalId,
        tableName: typeof p.TableName === 'string' ? p.TableName : undefined,
        ttlAttribute: ttl?.Enabled ? ttl.AttributeName : undefined,
        create: {
          KeySchema: p.KeySchema,
          AttributeDefinitions: p.AttributeDefinitions,
          BillingMode: 'PAY_PER_REQUEST',
          GlobalSecondaryIndexes: gsis?.map((g) => ({
            IndexName: g.IndexName,
            KeySchema: g.KeySchema,
            Projection: g.Projection,
          })),
          LocalSecondaryIndexes: lsis?.map((l) => ({
            IndexName: l.IndexName,
            KeySchema: l.KeySchema,
            Projection: l.Projection,
          })),
          StreamSpecification: stream ? { StreamEnabled: true, StreamViewType: stream.StreamViewType } : undefined,
        } as Omit<CreateTableCommandInput, 'TableName'>,
      };
    });
}

/** Creates one table as the template declares it, under the given name. */
export async function createTable(
  client: DynamoDBClient,
  definition: TableDefinition,
  tableName: string,
): Promise<void> {
  await client.send(new CreateTableCommand({ ...definition.create, TableName: tableName }));
  if (definition.ttlAttribute !== undefined) {
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: definition.ttlAttribute, Enabled: true },
      }),
    );
  }
}
