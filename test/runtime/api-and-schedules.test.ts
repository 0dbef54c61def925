import {
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { signedFetch } from '@exactly-once/tools/local-runtime/api/sign';
import { startRuntime, type LocalRuntime } from '@exactly-once/tools/local-runtime/runtime';
import { capturingLogger, eventually, NO_DOMAIN, readRecords, RECORDER, recordFile, writeAssembly } from './fixtures';

/**
 * The local REST API (routes, SigV4 caller, REST v1 proxy events, gateway
 * errors), EventBridge rate schedules, SQS alarms and the not-emulated
 * report, on one runtime started from a hand-made template.
 */
const records = recordFile();
const logger = capturingLogger();
let runtime: LocalRuntime;
let base: string;

const apiRef = { Ref: 'Api' };
const resource = (parent: unknown, pathPart: string) => ({
  Type: 'AWS::ApiGateway::Resource',
  Properties: { RestApiId: apiRef, ParentId: parent, PathPart: pathPart },
});
const method = (resourceId: string, httpMethod: string, extra: Record<string, unknown> = {}) => ({
  Type: 'AWS::ApiGateway::Method',
  Properties: {
    RestApiId: apiRef,
    ResourceId: { Ref: resourceId },
    HttpMethod: httpMethod,
    AuthorizationType: 'AWS_IAM',
    Integration: {
      Type: 'AWS_PROXY',
      IntegrationHttpMethod: 'POST',
      Uri: {
        'Fn::Join': [
          '',
          [
            'arn:aws:apigateway:us-east-1:lambda:path/2015-03-31/functions/',
            { 'Fn::GetAtt': ['EchoFn', 'Arn'] },
            '/invocations',
          ],
        ],
      },
    },
    ...extra,
  },
});

beforeAll(async () => {
  const cdkOut = writeAssembly({
    resources: {
      Api: { Type: 'AWS::ApiGateway::RestApi', Properties: { Name: 'fixture' } },
      Stage: { Type: 'AWS::ApiGateway::Stage', Properties: { RestApiId: apiRef, StageName: 'api' } },
      Validator: {
        Type: 'AWS::ApiGateway::RequestValidator',
        Properties: { RestApiId: apiRef, ValidateRequestParameters: true },
      },
      Problem4xx: {
        Type: 'AWS::ApiGateway::GatewayResponse',
        Properties: {
          RestApiId: apiRef,
          ResponseType: 'DEFAULT_4XX',
          ResponseParameters: { 'gatewayresponse.header.Content-Type': "'application/problem+json'" },
          ResponseTemplates: {
            'application/json':
              '{"type":"urn:problem-type:default-4xx","title":"Request refused","detail":"$context.error.message"}',
          },
        },
      },
      Items: resource({ 'Fn::GetAtt': ['Api', 'RootResourceId'] }, 'items'),
      Item: resource({ Ref: 'Items' }, '{itemId}'),
      Files: resource({ 'Fn::GetAtt': ['Api', 'RootResourceId'] }, 'files'),
      FilesProxy: resource({ Ref: 'Files' }, '{proxy+}'),
      ItemsPost: method('Items', 'POST', {
        RequestValidatorId: { Ref: 'Validator' },
        RequestParameters: { 'method.request.header.Idempotency-Key': true },
      }),
      ItemGet: method('Item', 'GET'),
      FilesAny: method('FilesProxy', 'ANY'),
      Tick: {
        Type: 'AWS::Events::Rule',
        Properties: {
          ScheduleExpression: 'rate(1 minute)',
          State: 'ENABLED',
          Targets: [{ Arn: { 'Fn::GetAtt': ['TickFn', 'Arn'] }, Id: 'T' }],
        },
      },
      Nightly: {
        Type: 'AWS::Events::Rule',
        Properties: {
          ScheduleExpression: 'cron(0 3 * * ? *)',
          Targets: [{ Arn: { 'Fn::GetAtt': ['TickFn', 'Arn'] }, Id: 'N' }],
        },
      },
      Backlog: { Type: 'AWS::SQS::Queue' },
      Topic: { Type: 'AWS::SNS::Topic' },
      BacklogAlarm: {
        Type: 'AWS::CloudWatch::Alarm',
        Properties: {
          AlarmName: 'backlog-not-empty',
          Namespace: 'AWS/SQS',
          MetricName: 'ApproximateNumberOfMessagesVisible',
          Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': ['Backlog', 'QueueName'] } }],
          Statistic: 'Maximum',
          Period: 60,
          EvaluationPeriods: 1,
          Threshold: 2,
          ComparisonOperator: 'GreaterThanOrEqualToThreshold',
          AlarmActions: [{ Ref: 'Topic' }],
        },
      },
      ErrorsAlarm: {
        Type: 'AWS::CloudWatch::Alarm',
        Properties: {
          Namespace: 'AWS/Lambda',
          MetricName: 'Errors',
          Period: 60,
          EvaluationPeriods: 1,
          Threshold: 1,
          ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        },
      },
      Mystery: { Type: 'AWS::Foo::Bar', Properties: {} },
    },
    functions: {
      EchoFn: {
        code: `exports.handler = async (event) => {
  if (event.pathParameters && event.pathParameters.itemId === 'boom') throw new Error('boom');
  return { statusCode: 200, headers: { 'Content-Type': 'application/json' }, multiValueHeaders: { 'X-Multi': ['a', 'b'] }, body: JSON.stringify(event) };
};`,
      },
      TickFn: {
        environment: { RECORD_FILE: records },
        code: `${RECORDER} exports.handler = async (event) => record({ fn: 'tick', event });`,
      },
    },
  });
  runtime = await startRuntime({
    domain: NO_DOMAIN,
    cdkOut,
    port: 0,
    log: logger.log,
    timeScale: 0.01,
    alarmIntervalMs: 200,
  });
  base = runtime.outputs.apiUrl!;
}, 60_000);

afterAll(async () => {
  await runtime?.stop();
});

async function call(
  method: string,
  path: string,
  options: { body?: string; headers?: Record<string, string>; accessKeyId?: string } = {},
) {
  const response = await signedFetch(`${base}${path}`, { method, ...options });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    text,
    json: () => JSON.parse(text) as APIGatewayProxyEvent,
  };
}

test('a request without a SigV4 Authorization header is refused with 403 problem+json', async () => {
  const response = await fetch(`${base}/items/1`);

  expect(response.status).toBe(403);
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  expect(await response.json()).toEqual({
    type: 'urn:problem-type:default-4xx',
    title: 'Request refused',
    detail: 'Missing Authentication Token',
  });
});

test('builds a REST v1 proxy event: IAM identity from the access key, path parameters, resource, headers, query', async () => {
  const response = await call('GET', '/items/it%20em-1?tag=a&tag=b&one=1', {
    headers: { 'X-Custom': 'v' },
    accessKeyId: 'AKIAALICE',
  });

  expect(response.status).toBe(200);
  expect(response.headers.get('x-multi')).toBe('a, b');
  const event = response.json();
  expect(event).toMatchObject({
    httpMethod: 'GET',
    resource: '/items/{itemId}',
    path: '/items/it em-1',
    pathParameters: { itemId: 'it em-1' },
    queryStringParameters: { tag: 'b', one: '1' },
    multiValueQueryStringParameters: { tag: ['a', 'b'], one: ['1'] },
    body: null,
    isBase64Encoded: false,
    requestContext: {
      stage: 'api',
      resourcePath: '/items/{itemId}',
      httpMethod: 'GET',
      identity: { accessKey: 'AKIAALICE', caller: 'AKIAALICE', userArn: 'arn:aws:iam::000000000000:user/AKIAALICE' },
    },
  });
  // Header names keep the case the client sent; look them up as a handler would.
  const header = (map: Record<string, unknown>, name: string) =>
    Object.entries(map).find(([k]) => k.toLowerCase() === name)?.[1];
  expect(header(event.headers, 'x-custom')).toBe('v');
  expect(header(event.multiValueHeaders, 'x-custom')).toEqual(['v']);
  expect(header(event.headers, 'authorization')).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIAALICE\//);
});

test('serves greedy {proxy+} paths and the stage-prefixed URL; unknown routes get 403 as on API Gateway', async () => {
  const proxied = await call('DELETE', '/api/files/a/b/c.txt');
  const unknown = await call('GET', '/nowhere');

  expect(proxied.status).toBe(200);
  expect(proxied.json()).toMatchObject({
    resource: '/files/{proxy+}',
    path: '/files/a/b/c.txt',
    pathParameters: { proxy: 'a/b/c.txt' },
    httpMethod: 'DELETE',
  });
  expect(unknown.status).toBe(403);
});

test('required request parameters are checked (400 before the function), and a body is passed through', async () => {
  const missing = await call('POST', '/items', { body: '{"a":1}' });
  const present = await call('POST', '/items', { body: '{"a":1}', headers: { 'Idempotency-Key': '"k1"' } });

  expect(missing.status).toBe(400);
  expect(JSON.parse(missing.text).detail).toBe('Missing required request parameters: [Idempotency-Key]');
  expect(present.status).toBe(200);
  expect(present.json().body).toBe('{"a":1}');
});

test('a function error becomes a 502 from the gateway', async () => {
  const response = await call('GET', '/items/boom');

  expect(response.status).toBe(502);
});

test('rate schedules invoke their target with the scheduled event', async () => {
  const ticks = await eventually(
    () => {
      const t = readRecords<{ event: Record<string, unknown> }>(records);
      return t.length > 0 ? t : undefined;
    },
    30_000,
    'a scheduled invocation',
  );

  expect(ticks[0].event).toMatchObject({
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: '000000000000',
    region: 'us-east-1',
    resources: ['arn:aws:events:us-east-1:000000000000:rule/Tick'],
    detail: {},
  });
});

test('SQS alarms change state as the queue fills and drains, and say which action they would notify', async () => {
  const sqs = new SQSClient({
    region: 'us-east-1',
    endpoint: runtime.outputs.endpoints.sqs,
    credentials: { accessKeyId: 't', secretAccessKey: 't' },
  });
  const url = runtime.queues.get('Backlog')!.url;
  try {
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: [
          { Id: '1', MessageBody: 'x' },
          { Id: '2', MessageBody: 'y' },
        ],
      }),
    );
    const alarm = await eventually(
      () => logger.lines.find((l) => l.includes('ALARM backlog-not-empty')),
      25_000,
      'the ALARM line',
    );

    const received = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10 }));
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: url,
        Entries: received.Messages!.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })),
      }),
    );
    await eventually(() => logger.lines.find((l) => l.includes('OK    backlog-not-empty')), 25_000, 'the OK line');

    expect(alarm).toContain('ApproximateNumberOfMessagesVisible');
    expect(alarm).toContain('would notify arn:aws:sns:us-east-1:000000000000:');
    expect(runtime.alarms!.state('backlog-not-empty')).toBe('OK');
  } finally {
    sqs.destroy();
  }
});

test('lists what it does not emulate: unknown types, SNS, unsupported schedules and alarms', () => {
  const report = runtime.inventory.join('\n');

  expect(report).toContain('AWS::Foo::Bar x1');
  expect(report).toContain('AWS::SNS::Topic x1');
  expect(report).toMatch(/cron\(0 3 \* \* \? \*\).*Nightly/);
  expect(report).toMatch(/alarms on AWS\/Lambda metrics.*ErrorsAlarm/);
});
