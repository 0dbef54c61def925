import { startDynamoDbLocal, startFauxqs } from '@exactly-once/tools/local-runtime/emulators';

/**
 * Starts DynamoDB Local and fauxqs once for the whole integration suite and
 * hands their endpoints to the test workers through environment variables.
 * The teardown stops them, so no process outlives the test command.
 */
export default async function setup(): Promise<void> {
  const [dynamo, sqs] = await Promise.all([startDynamoDbLocal(), startFauxqs()]);
  (globalThis as Record<string, unknown>).__EMULATORS__ = [dynamo, sqs];
  process.env.TEST_DYNAMODB_ENDPOINT = dynamo.endpoint;
  process.env.TEST_SQS_ENDPOINT = sqs.endpoint;
}
