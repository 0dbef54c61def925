import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SendMessageBatchCommandInput, SendMessageBatchRequestEntry, SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AwsClientStub } from 'aws-sdk-client-mock';
import { useUnitEnvironment } from './handlers';

/**
 * A handler loaded in its own module registry (as each Lambda function has
 * its own process), after its environment is set, with the SDK mocked.
 *
 * The SDK modules and the mock library are imported in that same registry:
 * aws-sdk-client-mock matches commands with `instanceof`, and the handlers
 * recognise SDK errors with `instanceof`, so both must see the handler's classes.
 * The document client does not send through `DynamoDBClient.prototype.send`
 * (it runs the low-level command's middleware itself), so both are mocked.
 */
export interface MockedSdkHandler<H> {
  handler: H;
  doc: AwsClientStub<DynamoDBDocumentClient>;
  ddb: AwsClientStub<DynamoDBClient>;
  sqs: AwsClientStub<SQSClient>;
  docSdk: typeof import('@aws-sdk/lib-dynamodb');
  ddbSdk: typeof import('@aws-sdk/client-dynamodb');
  sqsSdk: typeof import('@aws-sdk/client-sqs');
  metrics: (typeof import('@exactly-once/runtime/runtime/observability'))['metrics'];
}

/**
 * Sets `env` (over the quiet unit environment), then imports the handler with
 * `importHandler` (an `import()` written in the test file) in a fresh registry.
 */
export async function loadWithMockedSdk<H>(
  env: Record<string, string>,
  importHandler: () => Promise<{ handler: unknown }>,
): Promise<MockedSdkHandler<H>> {
  useUnitEnvironment(env);
  let loaded: MockedSdkHandler<H> | undefined;
  await jest.isolateModulesAsync(async () => {
    const ddbSdk = await import('@aws-sdk/client-dynamodb');
    const docSdk = await import('@aws-sdk/lib-dynamodb');
    const sqsSdk = await import('@aws-sdk/client-sqs');
    const { mockClient } = await import('aws-sdk-client-mock');
    const { metrics } = await import('@exactly-once/runtime/runtime/observability');
    const { handler } = await importHandler();
    loaded = {
      handler: handler as H,
      doc: mockClient(docSdk.DynamoDBDocumentClient),
      ddb: mockClient(ddbSdk.DynamoDBClient),
      sqs: mockClient(sqsSdk.SQSClient),
      docSdk,
      ddbSdk,
      sqsSdk,
      metrics,
    };
  });
  if (loaded === undefined) throw new Error('the handler did not load');
  return loaded;
}

/** A mocked SendMessageBatch that accepts every entry, unless `fail` names it (SQS then lists it under Failed). */
export function acceptEntries(fail: (queueUrl: string, entry: SendMessageBatchRequestEntry) => boolean = () => false) {
  return (input: SendMessageBatchCommandInput) => {
    const entries = input.Entries ?? [];
    const failed = entries.filter((e) => fail(String(input.QueueUrl), e));
    return {
      Successful: entries
        .filter((e) => !failed.includes(e))
        .map((e) => ({ Id: e.Id, MessageId: `msg-${e.Id}`, MD5OfMessageBody: 'md5' })),
      Failed: failed.map((e) => ({ Id: e.Id, SenderFault: false, Code: 'InternalError', Message: 'try again' })),
    };
  };
}
