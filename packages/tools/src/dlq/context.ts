import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { ExampleTooling } from '../domain';
import {
  assertLocalRuntimeAnswers,
  deployedStackOutputs,
  LOCAL_CREDENTIALS,
  localStackOutputs,
  type StackOutputs,
} from '../stack';

/** The stack the tool works on and the clients that reach it. */
export interface DlqContext {
  stack: StackOutputs;
  sqs: SQSClient;
  dynamodb: DynamoDBClient;
  streams: DynamoDBStreamsClient;
  /**
   * The domain the stack was built from: its consumers (their DLQs, and which ledger holds each one's
   * claims), its outbox table's output and how to tell its events from poison.
   */
  domain: ExampleTooling;
  close(): void;
}

export function contextFor(stack: StackOutputs, domain: ExampleTooling): DlqContext {
  // Locally every client needs the emulator's endpoint explicitly: SDK v3 otherwise follows fauxqs's
  // queue-URL host, which does not resolve. DynamoDB Local serves the Streams API on its own endpoint.
  const local = stack.kind === 'local' ? { region: stack.region, credentials: LOCAL_CREDENTIALS } : {};
  const sqs = new SQSClient({ ...local, ...(stack.endpoints.sqs ? { endpoint: stack.endpoints.sqs } : {}) });
  const dynamoEndpoint = stack.endpoints.dynamodb ? { endpoint: stack.endpoints.dynamodb } : {};
  const dynamodb = new DynamoDBClient({ ...local, ...dynamoEndpoint });
  const streams = new DynamoDBStreamsClient({ ...local, ...dynamoEndpoint });
  return {
    stack,
    domain,
    sqs,
    dynamodb,
    streams,
    close() {
      sqs.destroy();
      dynamodb.destroy();
      streams.destroy();
    },
  };
}

/** `--stack NAME`: that deployed stack; otherwise the local runtime's outputs file. */
export async function openContext(
  options: { stack?: string; outputsFile?: string },
  domain: ExampleTooling,
): Promise<DlqContext> {
  if (options.stack !== undefined) return contextFor(await deployedStackOutputs(options.stack), domain);
  const local = localStackOutputs(options.outputsFile);
  await assertLocalRuntimeAnswers(local, options.outputsFile);
  return contextFor(local, domain);
}
