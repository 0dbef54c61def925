import { DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { createTable, tableDefinitions } from '@exactly-once/tools/local-runtime/template/dynamodb';
import { scan } from '@exactly-once/tools/proof-kit/verify';

/**
 * Points the SDK (and so the code under test) at the DynamoDB Local started by
 * the integration globalSetup, with throwaway credentials.
 */
export function useEmulatorEnvironment(): void {
  const endpoint = process.env.TEST_DYNAMODB_ENDPOINT;
  if (endpoint === undefined) throw new Error('TEST_DYNAMODB_ENDPOINT is not set: run through the integration project');
  process.env.AWS_ENDPOINT_URL_DYNAMODB = endpoint;
  if (process.env.TEST_SQS_ENDPOINT !== undefined) process.env.AWS_ENDPOINT_URL_SQS = process.env.TEST_SQS_ENDPOINT;
  process.env.AWS_REGION = 'us-east-1';
  process.env.AWS_ACCESS_KEY_ID = 'test';
  process.env.AWS_SECRET_ACCESS_KEY = 'test';
  process.env.POWERTOOLS_METRICS_NAMESPACE = 'ExactlyOnceTest';
  process.env.POWERTOOLS_SERVICE_NAME = 'test';
  process.env.POWERTOOLS_DEV = 'true';
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
}

export function testDynamoDbClient(): DynamoDBClient {
  return new DynamoDBClient({ endpoint: process.env.TEST_DYNAMODB_ENDPOINT, region: 'us-east-1' });
}

/** Tables created on DynamoDB Local under fresh names, by the short name the caller gave each, and how to drop them. */
export interface EmulatedTables<Name extends string = string> {
  names: Record<Name, string>;
  drop: () => Promise<void>;
}

/**
 * Creates the tables of a synthesized template exactly as it declares them (keys, indexes, stream,
 * TTL), under fresh names so test files never share a table. `shortName` names each by its logical
 * id (undefined leaves that table out).
 */
export async function createTemplateTables<Name extends string>(
  template: Record<string, unknown>,
  shortName: (logicalId: string) => Name | undefined,
): Promise<EmulatedTables<Name>> {
  const definitions = tableDefinitions(template as Parameters<typeof tableDefinitions>[0]);
  const client = testDynamoDbClient();
  const suffix = randomUUID().slice(0, 8);
  const names = {} as Record<Name, string>;
  for (const definition of definitions) {
    const short = shortName(definition.logicalId);
    if (short === undefined) continue;
    names[short] = `${short}-${suffix}`;
    await createTable(client, definition, names[short]);
  }
  return {
    names,
    drop: async () => {
      for (const name of Object.values<string>(names)) await client.send(new DeleteTableCommand({ TableName: name }));
      client.destroy();
    },
  };
}

export async function scanAll(tableName: string): Promise<Record<string, unknown>[]> {
  const doc = DynamoDBDocumentClient.from(testDynamoDbClient());
  try {
    return await scan(doc, tableName);
  } finally {
    doc.destroy();
  }
}
