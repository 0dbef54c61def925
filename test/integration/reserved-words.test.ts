import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { MemoryDynamoDb } from '@exactly-once/tools/simulation/memory-dynamodb';
import { reservedWords } from '@exactly-once/tools/simulation/reserved-words';
import { createSimulatedTables, EFFECTS_TABLE } from '@exactly-once/tools/simulation/world/tables';
import { testDynamoDbClient, useEmulatorEnvironment } from '../support/emulated-dynamodb';
import { createEmulatedTables } from '../support/emulated-stack';

/**
 * DynamoDB refuses a reserved word named bare in an expression. The in-memory DynamoDB the simulation
 * runs on must refuse the same words, or an adapter naming one (`ADD total :n`) passes every simulated
 * test and fails on the service: each word of its list is sent, bare and escaped, to DynamoDB Local and
 * to the fake, and both must answer alike.
 */

let raw: ReturnType<typeof testDynamoDbClient>;
let local: DynamoDBDocumentClient;
let localTable: string;
let drop: () => Promise<void>;
const memory = new MemoryDynamoDb();
createSimulatedTables(memory, 'Things');
const fake = memory.asDocumentClient();

beforeAll(async () => {
  useEmulatorEnvironment();
  const tables = await createEmulatedTables();
  localTable = tables.names.Effects;
  drop = tables.drop;
  raw = testDynamoDbClient();
  local = DynamoDBDocumentClient.from(raw);
}, 180_000);

afterAll(async () => {
  local.destroy();
  raw.destroy();
  await drop();
});

/** What the store answers to `SET <name> = :v`: 'ok', or the error's name. */
async function setBare(client: DynamoDBDocumentClient, table: string, name: string): Promise<string> {
  try {
    await client.send(
      new UpdateCommand({
        TableName: table,
        Key: { pk: 'RESERVED#probe', sk: 'RESERVED#probe' },
        UpdateExpression: `SET ${name} = :v`,
        ExpressionAttributeValues: { ':v': 1 },
      }),
    );
    return 'ok';
  } catch (error) {
    return (error as Error).name;
  }
}

async function setEscaped(client: DynamoDBDocumentClient, table: string, name: string): Promise<void> {
  await client.send(
    new UpdateCommand({
      TableName: table,
      Key: { pk: 'RESERVED#probe', sk: 'RESERVED#probe' },
      UpdateExpression: 'SET #name = :v',
      ExpressionAttributeNames: { '#name': name },
      ExpressionAttributeValues: { ':v': 1 },
    }),
  );
}

test('every word of the list is refused bare by DynamoDB Local and by the in-memory DynamoDB, with a ValidationException', async () => {
  const words = reservedWords().map((word) => word.toLowerCase());

  const answers = [];
  for (const word of words)
    answers.push({
      word,
      local: await setBare(local, localTable, word),
      memory: await setBare(fake, EFFECTS_TABLE, word),
    });

  expect(words.length).toBeGreaterThan(500);
  expect(answers.filter((a) => a.local !== 'ValidationException')).toEqual([]);
  expect(answers.filter((a) => a.memory !== 'ValidationException')).toEqual([]);
});

test('escaped through ExpressionAttributeNames, the same words are accepted by both', async () => {
  const words = ['total', 'status', 'count', 'name', 'owner', 'data', 'key'];

  for (const word of words) {
    await setEscaped(local, localTable, word);
    await setEscaped(fake, EFFECTS_TABLE, word);
  }

  expect(words.every((word) => reservedWords().includes(word.toUpperCase()))).toBe(true);
});

test('names that are not reserved are accepted bare by both', async () => {
  const names = ['amount', 'appliedCount', 'lastVersion', 'thingId', 'expiresAt'];

  const answers = [];
  for (const name of names)
    answers.push([await setBare(local, localTable, name), await setBare(fake, EFFECTS_TABLE, name)]);

  expect(answers).toEqual(names.map(() => ['ok', 'ok']));
});
