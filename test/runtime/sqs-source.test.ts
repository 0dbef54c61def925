import { ReceiveMessageCommand, SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import * as path from 'node:path';
import { startRuntime, type LocalRuntime } from '@exactly-once/tools/local-runtime/runtime';
import { capturingLogger, eventually, NO_DOMAIN, readRecords, RECORDER, recordFile, writeAssembly } from './fixtures';

/**
 * SQS event source mappings, run by the local runtime against fauxqs with
 * Lambda's semantics. One runtime serves every test of the file; each test
 * has its own queue and function.
 */
const records = recordFile();
let runtime: LocalRuntime;
let sqs: SQSClient;

const queue = (properties: Record<string, unknown> = {}) => ({ Type: 'AWS::SQS::Queue', Properties: properties });
const mapping = (fn: string, queueId: string, properties: Record<string, unknown> = {}) => ({
  Type: 'AWS::Lambda::EventSourceMapping',
  Properties: { FunctionName: { Ref: fn }, EventSourceArn: { 'Fn::GetAtt': [queueId, 'Arn'] }, ...properties },
});

beforeAll(async () => {
  const environment = { RECORD_FILE: records };
  const cdkOut = writeAssembly({
    resources: {
      BatchQueue: queue(),
      // A long window: the batch fills (5) long before it closes, however loaded the machine is.
      BatchMapping: mapping('BatchFn', 'BatchQueue', { BatchSize: 5, MaximumBatchingWindowInSeconds: 10 }),
      PartialDlq: queue(),
      PartialQueue: queue({
        VisibilityTimeout: 1,
        RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': ['PartialDlq', 'Arn'] }, maxReceiveCount: 2 },
      }),
      PartialMapping: mapping('PartialFn', 'PartialQueue', { FunctionResponseTypes: ['ReportBatchItemFailures'] }),
      SlowQueue: queue(),
      SlowMapping: mapping('SlowFn', 'SlowQueue', { BatchSize: 1, ScalingConfig: { MaximumConcurrency: 2 } }),
      OrderedQueue: queue({ FifoQueue: true, ContentBasedDeduplication: true, VisibilityTimeout: 5 }),
      OrderedMapping: mapping('FifoFn', 'OrderedQueue', {
        BatchSize: 10,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
      }),
    },
    functions: {
      BatchFn: {
        environment,
        code: `${RECORDER} exports.handler = async (event) => record({ fn: 'batch', records: event.Records });`,
      },
      PartialFn: {
        environment,
        code: `${RECORDER}
exports.handler = async (event) => {
  for (const r of event.Records) record({ fn: 'partial', body: r.body, receiveCount: r.attributes.ApproximateReceiveCount });
  return { batchItemFailures: event.Records.filter((r) => r.body.startsWith('fail')).map((r) => ({ itemIdentifier: r.messageId })) };
};`,
      },
      SlowFn: {
        environment,
        code: `${RECORDER}
exports.handler = async (event) => {
  const start = Date.now();
  await new Promise((r) => setTimeout(r, 400));
  record({ fn: 'slow', start, end: Date.now() });
};`,
      },
      FifoFn: {
        environment,
        code: `${RECORDER}
exports.handler = async (event) => {
  for (const r of event.Records) {
    await new Promise((res) => setTimeout(res, Math.random() * 50));
    record({ fn: 'fifo', group: r.attributes.MessageGroupId, body: r.body });
  }
};`,
      },
      EnvFn: {
        environment: {
          QUEUE_URL: { Ref: 'PartialDlq' },
          QUEUE_ARN: { 'Fn::GetAtt': ['PartialDlq', 'Arn'] },
          JOINED: { 'Fn::Join': ['|', [{ 'Fn::GetAtt': ['PartialDlq', 'QueueName'] }, { Ref: 'AWS::Region' }]] },
          SUBBED: { 'Fn::Sub': ['${Name}@${AWS::AccountId}', { Name: { 'Fn::GetAtt': ['BatchQueue', 'QueueName'] } }] },
          SDK: path.dirname(require.resolve('@aws-sdk/client-sqs/package.json')),
        },
        code: `
exports.handler = async () => {
  // No explicit endpoint: AWS_ENDPOINT_URL_SQS and the host's *.localhost resolution must be enough.
  const { SQSClient, SendMessageCommand } = require(process.env.SDK);
  const sent = await new SQSClient({}).send(new SendMessageCommand({ QueueUrl: process.env.QUEUE_URL, MessageBody: 'from-function' }));
  const { QUEUE_URL, QUEUE_ARN, JOINED, SUBBED, AWS_ENDPOINT_URL_SQS } = process.env;
  return { QUEUE_URL, QUEUE_ARN, JOINED, SUBBED, AWS_ENDPOINT_URL_SQS, sent: Boolean(sent.MessageId) };
};`,
      },
    },
  });
  runtime = await startRuntime({ domain: NO_DOMAIN, cdkOut, port: 0, log: capturingLogger().log });
  sqs = new SQSClient({
    region: 'us-east-1',
    endpoint: runtime.outputs.endpoints.sqs,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
}, 60_000);

afterAll(async () => {
  sqs?.destroy();
  await runtime?.stop();
});

type Recorded = { fn: string; [key: string]: unknown };
const recorded = (fn: string) => readRecords<Recorded>(records).filter((r) => r.fn === fn);

async function send(queueId: string, bodies: string[], extra: (i: number) => Record<string, unknown> = () => ({})) {
  await sqs.send(
    new SendMessageBatchCommand({
      QueueUrl: runtime.queues.get(queueId)!.url,
      Entries: bodies.map((body, i) => ({ Id: String(i), MessageBody: body, ...extra(i) })),
    }),
  );
}

test('gathers a batch up to BatchSize within the batching window, in Lambda SQS record shape', async () => {
  await send('BatchQueue', ['a', 'b'], () => ({
    MessageAttributes: { kind: { DataType: 'String', StringValue: 'test' } },
  }));
  await new Promise((r) => setTimeout(r, 300));
  await send('BatchQueue', ['c', 'd', 'e']);

  const [invocation] = await eventually(() => (recorded('batch').length > 0 ? recorded('batch') : undefined));

  const batch = invocation.records as Record<string, unknown>[];
  expect(batch.map((r) => r.body).sort()).toEqual(['a', 'b', 'c', 'd', 'e']);
  expect(batch[0]).toMatchObject({
    eventSource: 'aws:sqs',
    eventSourceARN: runtime.queues.get('BatchQueue')!.arn,
    awsRegion: 'us-east-1',
    attributes: { ApproximateReceiveCount: '1' },
  });
  expect(batch.find((r) => r.body === 'a')!.messageAttributes).toEqual({
    kind: { stringValue: 'test', stringListValues: [], binaryListValues: [], dataType: 'String' },
  });
});

test('partial batch response: only reported items return, and the queue redrive moves them to the DLQ by receive count', async () => {
  await send('PartialQueue', ['ok-1', 'fail-1', 'ok-2']);

  const dlq = await eventually(
    async () => {
      const out = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: runtime.queues.get('PartialDlq')!.url, WaitTimeSeconds: 1 }),
      );
      return out.Messages?.length ? out.Messages : undefined;
    },
    15_000,
    'the failed message in the DLQ',
  );

  expect(dlq.map((m) => m.Body)).toEqual(['fail-1']);
  const seen = recorded('partial');
  expect(seen.filter((r) => r.body === 'ok-1')).toHaveLength(1);
  expect(seen.filter((r) => r.body === 'ok-2')).toHaveLength(1);
  expect(seen.filter((r) => r.body === 'fail-1').map((r) => r.receiveCount)).toEqual(['1', '2']);
});

test('maximum concurrency bounds the batches in flight', async () => {
  await send('SlowQueue', ['1', '2', '3', '4', '5', '6']);

  const runs = await eventually(
    () => (recorded('slow').length === 6 ? recorded('slow') : undefined),
    15_000,
    'six slow invocations',
  );

  // Most invocations running at one instant (an end sorts before a start at the same ms).
  const edges = runs
    .flatMap((r) => [
      [r.start as number, 1],
      [r.end as number, -1],
    ])
    .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let running = 0;
  const peak = Math.max(...edges.map(([, delta]) => (running += delta)));
  expect(peak).toBe(2);
});

test('FIFO: each message group is delivered in order', async () => {
  const bodies = ['A1', 'B1', 'A2', 'B2', 'A3', 'B3', 'A4', 'B4'];
  await send('OrderedQueue', bodies, (i) => ({ MessageGroupId: bodies[i][0] }));

  const seen = await eventually(
    () => (recorded('fifo').length === 8 ? recorded('fifo') : undefined),
    15_000,
    'eight FIFO messages',
  );

  expect(seen.filter((r) => r.group === 'A').map((r) => r.body)).toEqual(['A1', 'A2', 'A3', 'A4']);
  expect(seen.filter((r) => r.group === 'B').map((r) => r.body)).toEqual(['B1', 'B2', 'B3', 'B4']);
});

test('function environment: Ref, Fn::GetAtt, Fn::Join and Fn::Sub resolve to local resources, and the SDK reaches fauxqs', async () => {
  const dlq = runtime.queues.get('PartialDlq')!;

  const result = await runtime.hosts.get('EnvFn')!.invoke({});

  expect(result.ok && result.payload).toEqual({
    QUEUE_URL: dlq.url,
    QUEUE_ARN: `arn:aws:sqs:us-east-1:000000000000:${dlq.name}`,
    JOINED: `${dlq.name}|us-east-1`,
    SUBBED: `${runtime.queues.get('BatchQueue')!.name}@000000000000`,
    // The functions reach fauxqs through the runtime's counting proxy, on loopback.
    AWS_ENDPOINT_URL_SQS: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
    sent: true,
  });
});
