import { DynamoDBClient, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { startRuntime, type LocalRuntime } from '@exactly-once/tools/local-runtime/runtime';
import { capturingLogger, eventually, NO_DOMAIN, readRecords, RECORDER, recordFile, writeAssembly } from './fixtures';

/**
 * DynamoDB Streams event source mappings on DynamoDB Local, with Lambda's
 * semantics. One table, one mapping per scenario, each selecting its own
 * items with FilterCriteria (itself one of the semantics under test).
 */
const records = recordFile();
let runtime: LocalRuntime;
let dynamodb: DynamoDBClient;
let sqs: SQSClient;
const failureRecords: Record<string, unknown>[] = [];

const scenario = (name: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ dynamodb: { NewImage: { scenario: { S: [name] }, ...extra } } });

const mapping = (fn: string, pattern: string, properties: Record<string, unknown> = {}) => ({
  Type: 'AWS::Lambda::EventSourceMapping',
  Properties: {
    FunctionName: { Ref: fn },
    EventSourceArn: { 'Fn::GetAtt': ['Events', 'StreamArn'] },
    StartingPosition: 'TRIM_HORIZON',
    FilterCriteria: { Filters: [{ Pattern: pattern }] },
    ...properties,
  },
});
const onFailure = { DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': ['StreamDlq', 'Arn'] } } } };

beforeAll(async () => {
  const environment = { RECORD_FILE: records };
  const cdkOut = writeAssembly({
    resources: {
      Events: {
        Type: 'AWS::DynamoDB::Table',
        Properties: {
          KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
          AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
          BillingMode: 'PAY_PER_REQUEST',
          StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' },
        },
      },
      StreamDlq: { Type: 'AWS::SQS::Queue' },
      FilterMapping: mapping(
        'FilterFn',
        JSON.stringify({
          eventName: ['INSERT'],
          dynamodb: { NewImage: { scenario: { S: ['filter'] }, kind: { S: [{ prefix: 'outbox' }] } } },
        }),
        { BatchSize: 2 },
      ),
      BisectMapping: mapping('BisectFn', scenario('bisect'), {
        BatchSize: 10,
        MaximumBatchingWindowInSeconds: 1,
        BisectBatchOnFunctionError: true,
        MaximumRetryAttempts: 1,
        ...onFailure,
      }),
      PartialMapping: mapping('PartialFn', scenario('partial'), {
        BatchSize: 10,
        MaximumBatchingWindowInSeconds: 1,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
      }),
      AgeMapping: mapping('AgeFn', scenario('age'), {
        MaximumRecordAgeInSeconds: 1,
        MaximumRetryAttempts: -1,
        ...onFailure,
      }),
    },
    functions: {
      FilterFn: {
        environment,
        code: `${RECORDER} exports.handler = async (e) => record({ fn: 'filter', records: e.Records });`,
      },
      BisectFn: {
        environment,
        code: `${RECORDER}
exports.handler = async (e) => {
  const keys = e.Records.map((r) => r.dynamodb.Keys.pk.S);
  const poisoned = keys.some((k) => k.includes('poison'));
  record({ fn: 'bisect', keys, ok: !poisoned });
  if (poisoned) throw new Error('poison record');
};`,
      },
      PartialFn: {
        environment,
        code: `${RECORDER}
exports.handler = async (e) => {
  record({ fn: 'partial', keys: e.Records.map((r) => r.dynamodb.Keys.pk.S) });
  const flaky = e.Records.find((r) => r.dynamodb.Keys.pk.S === 'p2');
  const marker = process.env.RECORD_FILE + '.p2';
  if (flaky && !fs.existsSync(marker)) {
    fs.writeFileSync(marker, '');
    return { batchItemFailures: [{ itemIdentifier: flaky.dynamodb.SequenceNumber }] };
  }
  return { batchItemFailures: [] };
};`,
      },
      AgeFn: {
        environment,
        code: `exports.handler = async () => { await new Promise((r) => setTimeout(r, 300)); throw new Error('always'); };`,
      },
    },
  });
  runtime = await startRuntime({ domain: NO_DOMAIN, cdkOut, port: 0, log: capturingLogger().log });
  const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };
  dynamodb = new DynamoDBClient({ region: 'us-east-1', endpoint: runtime.outputs.endpoints.dynamodb, credentials });
  sqs = new SQSClient({ region: 'us-east-1', endpoint: runtime.outputs.endpoints.sqs, credentials });
}, 60_000);

afterAll(async () => {
  dynamodb?.destroy();
  sqs?.destroy();
  await runtime?.stop();
});

const put = (pk: string, attributes: Record<string, string>) =>
  dynamodb.send(
    new PutItemCommand({
      TableName: runtime.tables.get('Events')!.name,
      Item: { pk: { S: pk }, ...Object.fromEntries(Object.entries(attributes).map(([k, v]) => [k, { S: v }])) },
    }),
  );

type Recorded = { fn: string; keys?: string[]; ok?: boolean; records?: Record<string, unknown>[] };
const recorded = (fn: string) => readRecords<Recorded>(records).filter((r) => r.fn === fn);

/** Failure records that reached the on-failure destination, collected across tests. */
async function failureRecord(condition: string): Promise<Record<string, unknown>> {
  return eventually(
    async () => {
      const out = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: runtime.queues.get('StreamDlq')!.url,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
        }),
      );
      failureRecords.push(...(out.Messages ?? []).map((m) => JSON.parse(m.Body!) as Record<string, unknown>));
      return failureRecords.find((r) => (r.requestContext as { condition: string }).condition === condition);
    },
    20_000,
    `a ${condition} failure record`,
  );
}

test('filter criteria deliver only matching records, in batches of at most BatchSize, in stream record shape', async () => {
  for (const [pk, kind] of [
    ['f1', 'outbox#1'],
    ['f2', 'order'],
    ['f3', 'outbox#2'],
    ['f4', 'outbox#3'],
  ])
    await put(pk, { scenario: 'filter', kind });
  await dynamodb.send(
    new UpdateItemCommand({
      TableName: runtime.tables.get('Events')!.name,
      Key: { pk: { S: 'f1' } },
      UpdateExpression: 'SET kind = :k',
      ExpressionAttributeValues: { ':k': { S: 'outbox#1b' } },
    }),
  );

  const invocations = await eventually(() => {
    const all = recorded('filter');
    return all.flatMap((i) => i.records!).length >= 3 ? all : undefined;
  });
  await new Promise((r) => setTimeout(r, 1_000)); // Nothing else may arrive.

  const delivered = recorded('filter').flatMap((i) => i.records!);
  expect(delivered.map((r) => (r.dynamodb as { Keys: { pk: { S: string } } }).Keys.pk.S)).toEqual(['f1', 'f3', 'f4']);
  expect(invocations.every((i) => i.records!.length <= 2)).toBe(true);
  expect(delivered[0]).toMatchObject({
    eventName: 'INSERT',
    eventSource: 'aws:dynamodb',
    awsRegion: 'us-east-1',
    eventSourceARN: runtime.tables.get('Events')!.streamArn,
    dynamodb: { NewImage: { pk: { S: 'f1' }, kind: { S: 'outbox#1' } }, StreamViewType: 'NEW_AND_OLD_IMAGES' },
  });
});

test('bisect on error isolates a poison record; after its retries it goes to the on-failure destination, the rest are processed', async () => {
  for (const pk of ['b1', 'b2', 'b3-poison', 'b4']) await put(pk, { scenario: 'bisect' });

  const failure = await failureRecord('RetryAttemptsExhausted');
  // The records after the poison are processed once it has gone to the destination: wait for them.
  const succeeded = await eventually(
    () => {
      const keys = recorded('bisect')
        .filter((r) => r.ok)
        .flatMap((r) => r.keys!);
      return keys.includes('b4') ? keys : undefined;
    },
    30_000,
    'the records after the poison',
  );

  expect(succeeded.sort()).toEqual(['b1', 'b2', 'b4']);
  const poisonOnly = recorded('bisect').filter((r) => r.keys!.length === 1 && r.keys![0] === 'b3-poison');
  expect(poisonOnly).toHaveLength(2); // First try plus MaximumRetryAttempts: 1; the splits did not count.
  expect(failure).toMatchObject({
    version: '1.0',
    requestContext: {
      condition: 'RetryAttemptsExhausted',
      approximateInvokeCount: 2,
      functionArn: expect.stringContaining('function:'),
    },
    responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
    DDBStreamBatchInfo: { batchSize: 1, streamArn: runtime.tables.get('Events')!.streamArn },
  });
  const info = failure.DDBStreamBatchInfo as { startSequenceNumber: string; endSequenceNumber: string };
  expect(info.startSequenceNumber).toBe(info.endSequenceNumber);
});

test('partial batch response: retries from the lowest failed sequence number, records before it are not redelivered', async () => {
  for (const pk of ['p1', 'p2', 'p3']) await put(pk, { scenario: 'partial' });

  const invocations = await eventually(() => (recorded('partial').length >= 2 ? recorded('partial') : undefined));
  await new Promise((r) => setTimeout(r, 1_000));

  expect(recorded('partial').map((i) => i.keys)).toEqual([
    ['p1', 'p2', 'p3'],
    ['p2', 'p3'],
  ]);
  expect(invocations).toHaveLength(2);
});

test('records older than MaximumRecordAgeInSeconds are discarded to the on-failure destination', async () => {
  await put('a1', { scenario: 'age' });

  const failure = await failureRecord('RecordAgeExceeded');

  expect(failure).toMatchObject({
    requestContext: { condition: 'RecordAgeExceeded' },
    DDBStreamBatchInfo: { batchSize: 1 },
  });
  expect((failure.requestContext as { approximateInvokeCount: number }).approximateInvokeCount).toBeGreaterThanOrEqual(
    1,
  );
});
