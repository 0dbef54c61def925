import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { testDynamoDbClient, useEmulatorEnvironment } from './emulated-dynamodb';
import { createEmulatedTables } from './emulated-stack';

/** What a ledger test on DynamoDB Local works with: the Effects table's name and clients on it. */
export interface EmulatedEffects {
  documents: DynamoDBDocumentClient;
  raw: ReturnType<typeof testDynamoDbClient>;
  effectsTable: string;
}

/**
 * Registers the file's beforeAll and afterAll for a ledger test on DynamoDB Local: the emulated tables
 * created once (the Effects table is the mechanism construct's), clients on them handed to `ready`, and
 * both destroyed and the tables dropped after the file.
 *
 * @example
 * ```ts
 * let documents: DynamoDBDocumentClient;
 * let effectsTable: string;
 * useEmulatedEffects((db) => ({ documents, effectsTable } = db));
 * ```
 */
export function useEmulatedEffects(ready: (db: EmulatedEffects) => void): void {
  let db: EmulatedEffects | undefined;
  let drop: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    useEmulatorEnvironment();
    const tables = await createEmulatedTables();
    drop = tables.drop;
    const raw = testDynamoDbClient();
    db = { raw, documents: DynamoDBDocumentClient.from(raw), effectsTable: tables.names.Effects };
    ready(db);
  }, 180_000);
  afterAll(async () => {
    db?.documents.destroy();
    db?.raw.destroy();
    await drop?.();
  });
}
