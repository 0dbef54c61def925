import {
  DeleteItemCommand,
  DynamoDBClient,
  PutItemCommand,
  TransactionCanceledException,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { apiEvent, lambdaContext } from '../support/api-events';
import { BUG_WRITE_ERRORS, RETRYABLE_WRITE_ERRORS } from '../support/dependency-errors';
import { expectProblem, useUnitEnvironment, type HttpResult } from '../support/handlers';

/**
 * The mechanism's answer to a failing dependency (`dependency-failure-503`), on the probe stack's
 * producer (POST /things: the idempotent command around one transaction, the thing and its outbox
 * item), with DynamoDB mocked at the SDK: 503 + Retry-After only when a retry can succeed, and the
 * idempotency lock released for it; 500 when the same request would fail again.
 */
const ddb = mockClient(DynamoDBClient);
const doc = mockClient(DynamoDBDocumentClient);

type Handler = (typeof import('../exactly-once/fixtures/probe-stack-producer'))['handler'];
let handler: Handler;

beforeAll(async () => {
  useUnitEnvironment({
    THINGS_TABLE_NAME: 'things-table',
    IDEMPOTENCY_TABLE_NAME: 'idempotency-table',
    IDEMPOTENCY_KEY_EXPIRY_SECONDS: '86400',
    HUMAN_ROLE_PATTERNS: 'AWSReservedSSO_*',
  });
  // The handler reads its configuration at import: environment first, then the module.
  ({ handler } = await import('../exactly-once/fixtures/probe-stack-producer'));
});

beforeEach(() => {
  ddb.reset();
  doc.reset();
  ddb.on(PutItemCommand).resolves({});
  ddb.on(UpdateItemCommand).resolves({});
  ddb.on(DeleteItemCommand).resolves({});
  doc.on(TransactWriteCommand).resolves({});
});

function postThing(): Promise<HttpResult> {
  return handler(
    apiEvent({
      method: 'POST',
      path: '/things',
      caller: 'arn:aws:iam::123456789012:user/alice',
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': '"thing-key-1"' },
      body: JSON.stringify({ ownerId: 'owner-1', amount: 3 }),
    }),
    lambdaContext(),
  ) as Promise<HttpResult>;
}

/** Powertools' release of the in-progress record: what lets the client's retry run the command again. */
const idempotencyDeletes = () => ddb.commandCalls(DeleteItemCommand).map((c) => c.args[0].input);
const idempotencyCompletions = () => ddb.commandCalls(UpdateItemCommand).map((c) => c.args[0].input);

test('a transaction that commits is a 201 and completes the idempotency record (the baseline the failures differ from)', async () => {
  const response = await postThing();

  expect(response.statusCode).toBe(201);
  expect(doc.commandCalls(TransactWriteCommand)).toHaveLength(1);
  expect(idempotencyCompletions()).toHaveLength(1);
  expect(idempotencyDeletes()).toEqual([]);
});

describe('error classes of the thing transaction', () => {
  test.each(RETRYABLE_WRITE_ERRORS)(
    '%s: 503 with Retry-After, and the idempotency lock is released for the retry',
    async (_name, error) => {
      doc.on(TransactWriteCommand).rejects(error());

      const response = await postThing();

      expectProblem(response, 503);
      expect(response.headers['Retry-After']).toBe('1');
      expect(idempotencyDeletes()).toHaveLength(1);
      expect(idempotencyCompletions()).toEqual([]);
    },
  );

  test.each(BUG_WRITE_ERRORS)('%s: 500 (a bug; retrying cannot help), no Retry-After', async (_name, error) => {
    doc.on(TransactWriteCommand).rejects(error());

    const response = await postThing();

    expectProblem(response, 500);
    expect(response.headers['Retry-After']).toBeUndefined();
    expect(idempotencyCompletions()).toEqual([]);
  });

  test('a condition failure on the outbox item is a 500: no retry can write it, and no 201 is given for an unwritten thing', async () => {
    // The thing's put passes; the outbox put's condition (attribute_not_exists) fails: a leftover item.
    doc.on(TransactWriteCommand).rejects(
      new TransactionCanceledException({
        message:
          'Transaction cancelled, please refer cancellation reasons for specific reasons [None, ConditionalCheckFailed]',
        $metadata: { httpStatusCode: 400 },
        CancellationReasons: [
          { Code: 'None' },
          { Code: 'ConditionalCheckFailed', Message: 'The conditional request failed' },
        ],
      }),
    );

    const response = await postThing();

    expectProblem(response, 500);
    expect(response.headers['Retry-After']).toBeUndefined();
  });
});
