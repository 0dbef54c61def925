import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  DynamoDBClient,
  InternalServerError,
  ProvisionedThroughputExceededException,
  PutItemCommand,
  TransactionCanceledException,
  UpdateItemCommand,
  type AttributeValue,
  type PutItemCommandInput,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { deriveOrderId, orderTotalCents } from '../../lambdas/shop/domain/order';
import { BUG_WRITE_ERRORS, RETRYABLE_WRITE_ERRORS } from '../support/dependency-errors';
import { apiEvent, lambdaContext, VALID_ORDER } from '../support/api-events';
import { expectProblem, useUnitEnvironment, type HttpResult } from '../support/handlers';
import { setSpanSink, type SpanRecord } from '@exactly-once/runtime/trace/spans';

/**
 * POST /orders, every status path, with DynamoDB mocked at the SDK:
 * - the low-level client carries Powertools' idempotency record
 *   (PutItem with ReturnValuesOnConditionCheckFailure ALL_OLD, UpdateItem, DeleteItem);
 * - the document client carries the order repository (TransactWriteItems).
 */
const ddb = mockClient(DynamoDBClient);
const doc = mockClient(DynamoDBDocumentClient);

const ORDERS_TABLE = 'orders-table';
const IDEMPOTENCY_TABLE = 'idempotency-table';
const ALICE = 'arn:aws:iam::123456789012:user/alice';
const BOB = 'arn:aws:iam::123456789012:user/bob';

type Handler = (typeof import('../../lambdas/shop/handlers/create-order'))['handler'];
let handler: Handler;

beforeAll(async () => {
  useUnitEnvironment({
    ORDERS_TABLE_NAME: ORDERS_TABLE,
    IDEMPOTENCY_TABLE_NAME: IDEMPOTENCY_TABLE,
    IDEMPOTENCY_KEY_EXPIRY_SECONDS: '86400',
  });
  // The handler reads its configuration at import: environment first, then the module.
  ({ handler } = await import('../../lambdas/shop/handlers/create-order'));
});

beforeEach(() => {
  ddb.reset();
  doc.reset();
  ddb.on(PutItemCommand).resolves({});
  ddb.on(UpdateItemCommand).resolves({});
  ddb.on(DeleteItemCommand).resolves({});
  doc.on(TransactWriteCommand).resolves({});
});

function post(options: { caller?: string | null; key?: string | string[]; body?: unknown } = {}): Promise<HttpResult> {
  const headers: Record<string, string | string[]> = { 'Content-Type': 'application/json' };
  const key = 'key' in options ? options.key : '"key-1"';
  if (key !== undefined) headers['Idempotency-Key'] = key;
  const body = options.body === undefined ? VALID_ORDER : options.body;
  return handler(
    apiEvent({
      method: 'POST',
      path: '/orders',
      caller: options.caller === undefined ? ALICE : options.caller,
      headers,
      body: typeof body === 'string' ? body : JSON.stringify(body),
    }),
    lambdaContext(),
  );
}

const idempotencyPuts = () => ddb.commandCalls(PutItemCommand).map((c) => c.args[0].input);
const idempotencyUpdates = () => ddb.commandCalls(UpdateItemCommand).map((c) => c.args[0].input);
const idempotencyDeletes = () => ddb.commandCalls(DeleteItemCommand).map((c) => c.args[0].input);
const transactions = () => doc.commandCalls(TransactWriteCommand).map((c) => c.args[0].input);

/** Every DynamoDB call of any kind, through either client. */
const allCalls = () => ddb.calls().length + doc.calls().length;

/**
 * The idempotency table already holds a record for this key: DynamoDB refuses
 * the conditional put and, as asked (ALL_OLD), returns the item it kept. The
 * item is derived from the one this request tried to write, as a concurrent
 * or earlier request with the same key would have written it.
 */
function idempotencyRecordExists(
  change: (attempted: Record<string, AttributeValue>) => Record<string, AttributeValue>,
): void {
  ddb.on(PutItemCommand).callsFake((input: PutItemCommandInput) => {
    throw new ConditionalCheckFailedException({
      message: 'The conditional request failed',
      $metadata: { httpStatusCode: 400 },
      Item: change(input.Item ?? {}),
    });
  });
}

/** The order put of the transaction a request sent, as the document client saw it. */
function orderPutOf(input: TransactWriteCommandInput): Record<string, unknown> {
  const put = input.TransactItems?.[0]?.Put;
  if (put === undefined) throw new Error('the first transaction item is not a Put');
  return put.Item as Record<string, unknown>;
}

/** The order already exists (a retry after a crash): both conditional puts of the transaction fail. */
function orderAlreadyExists(change: (attempted: Record<string, unknown>) => Record<string, unknown>): void {
  doc.on(TransactWriteCommand).callsFake((input: TransactWriteCommandInput) => {
    throw new TransactionCanceledException({
      message:
        'Transaction cancelled, please refer cancellation reasons for specific reasons [ConditionalCheckFailed, ConditionalCheckFailed]',
      $metadata: { httpStatusCode: 400 },
      CancellationReasons: [
        {
          Code: 'ConditionalCheckFailed',
          Message: 'The conditional request failed',
          Item: marshall(change(orderPutOf(input))),
        },
        { Code: 'ConditionalCheckFailed', Message: 'The conditional request failed' },
        // The customer access put has no condition.
        { Code: 'None' },
      ],
    });
  });
}

describe('201 Created', () => {
  test('places the order: body, Location, no replay header', async () => {
    const before = Date.now();

    const response = await post();

    expect(response.statusCode).toBe(201);
    expect(response.headers['Content-Type']).toBe('application/json');
    expect(response.headers['Idempotent-Replayed']).toBeUndefined();
    const body = JSON.parse(response.body);
    const orderId = deriveOrderId(ALICE, 'key-1');
    expect(body).toEqual({
      orderId,
      status: 'PLACED',
      customerId: VALID_ORDER.customerId,
      items: VALID_ORDER.items,
      totalCents: orderTotalCents(VALID_ORDER.items),
      createdAt: expect.any(String),
    });
    expect(Date.parse(body.createdAt)).toBeGreaterThanOrEqual(before - 1);
    expect(response.headers.Location).toBe(`/orders/${orderId}`);
  });

  test('takes the lock, writes order + outbox + customer access in one transaction, then stores the response', async () => {
    const response = await post();

    const [lock] = idempotencyPuts();
    expect(lock.TableName).toBe(IDEMPOTENCY_TABLE);
    expect(lock.ConditionExpression).toContain('attribute_not_exists(#id)');
    expect(lock.ReturnValuesOnConditionCheckFailure).toBe('ALL_OLD');
    expect(lock.Item?.status).toEqual({ S: 'INPROGRESS' });

    const [transaction] = transactions();
    expect(transaction.TransactItems).toHaveLength(3);
    const [orderPut, outboxPut, accessPut] = transaction.TransactItems!.map((t) => t.Put!);
    expect(orderPut).toMatchObject({ TableName: ORDERS_TABLE, ConditionExpression: 'attribute_not_exists(pk)' });
    expect(orderPut.Item).toMatchObject({
      sk: 'ORDER',
      status: 'PLACED',
      caller: ALICE,
      fingerprint: expect.any(String),
    });
    expect(outboxPut).toMatchObject({ TableName: ORDERS_TABLE, ConditionExpression: 'attribute_not_exists(pk)' });
    expect(outboxPut.Item).toMatchObject({
      pk: orderPut.Item!.pk,
      type: 'OrderPlaced',
      eventId: `${JSON.parse(response.body).orderId}.placed`,
      pendingShard: expect.any(String),
    });
    // Who may read the customer (GET /customers/{id}): one tiny item per order, with no condition, so it
    // can neither fail the order's transaction nor conflict with another order's (its key is this order's).
    expect(accessPut).toEqual({
      TableName: ORDERS_TABLE,
      Item: {
        pk: `CALLER#${ALICE}#CUSTOMER#${VALID_ORDER.customerId}`,
        sk: orderPut.Item!.pk,
        entity: 'CUSTOMER_ACCESS',
      },
    });

    const [completion] = idempotencyUpdates();
    expect(completion.Key).toEqual(lock.Item && { id: lock.Item.id });
    expect(completion.ExpressionAttributeValues?.[':status']).toEqual({ S: 'COMPLETED' });
    expect(completion.ExpressionAttributeValues?.[':response_data']).toBeDefined();
    expect(idempotencyDeletes()).toHaveLength(0);
    expect(allCalls()).toBe(3);
  });

  test("the outbox event carries the order's trace: the outbox-write span, under the api span, under the caller's traceparent", async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const spans: SpanRecord[] = [];
    const restore = setSpanSink((span) => spans.push(span));
    try {
      await handler(
        apiEvent({
          method: 'POST',
          path: '/orders',
          caller: ALICE,
          headers: { 'Idempotency-Key': '"key-1"', traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
          body: JSON.stringify(VALID_ORDER),
        }),
        lambdaContext(),
      );
    } finally {
      restore();
    }

    const [api, write] = ['api', 'outbox-write'].map((hop) => spans.find((s) => s.hop === hop)!);
    expect(api).toMatchObject({ traceId, parentId: '00f067aa0ba902b7' });
    expect(write).toMatchObject({ traceId, parentId: api.spanId });
    const event = (transactions()[0].TransactItems![1].Put!.Item as { event: { traceparent: string } }).event;
    expect(event.traceparent).toBe(`00-${traceId}-${write.spanId}-01`);
  });

  test('the key expires after 24 h, and the in-progress lock with the Lambda deadline', async () => {
    const nowSeconds = Date.now() / 1000;

    await post();

    const item = idempotencyPuts()[0].Item!;
    expect(Number(item.expiration.N)).toBeGreaterThanOrEqual(Math.floor(nowSeconds + 86_400 - 2));
    expect(Number(item.expiration.N)).toBeLessThanOrEqual(Math.ceil(nowSeconds + 86_400 + 2));
    // registerLambdaContext was called: without it there is no in-progress expiry and a crashed lock never frees.
    const inProgressUntil = Number(item.in_progress_expiration?.N);
    expect(inProgressUntil).toBeGreaterThan(nowSeconds * 1000 + 8_000);
    expect(inProgressUntil).toBeLessThanOrEqual(Date.now() + 10_000);
  });

  test('the idempotency record is keyed on (caller, unquoted key) and fingerprinted on the canonical body', async () => {
    const reordered = `{ "items": [ {"unitPriceCents":150, "quantity":2, "sku":"sku-apple"}, {"sku":"sku-pear","unitPriceCents":999,"quantity":1} ],\n "customerId": "cust-1" }`;

    await post({ caller: ALICE, key: '"shared"' });
    await post({ caller: ALICE, key: 'shared', body: reordered });
    await post({ caller: BOB, key: '"shared"' });
    await post({ caller: ALICE, key: '"shared"', body: { ...VALID_ORDER, customerId: 'cust-2' } });

    const [first, retry, otherCaller, otherBody] = idempotencyPuts().map((p) => p.Item!);
    expect(first.id.S).toMatch(/^create-order#/);
    expect(retry.id).toEqual(first.id);
    expect(retry.validation).toEqual(first.validation);
    expect(otherCaller.id).not.toEqual(first.id);
    expect(otherBody.id).toEqual(first.id);
    expect(otherBody.validation).not.toEqual(first.validation);
  });

  test('the header name is case-insensitive (HTTP/2 clients send it lower-case)', async () => {
    const response = await handler(
      apiEvent({
        method: 'POST',
        path: '/orders',
        caller: ALICE,
        headers: { 'content-type': 'application/json', 'idempotency-key': '"key-1"' },
        body: JSON.stringify(VALID_ORDER),
      }),
      lambdaContext(),
    );

    expect(response.statusCode).toBe(201);
    expect(JSON.parse(response.body).orderId).toBe(deriveOrderId(ALICE, 'key-1'));
  });

  test('a retry after a crash finds its own order already written and answers with it', async () => {
    orderAlreadyExists((attempted) => ({ ...attempted, createdAt: '2020-01-01T00:00:00.000Z', version: 1 }));

    const response = await post();

    expect(response.statusCode).toBe(201);
    const body = JSON.parse(response.body);
    expect(body).toMatchObject({
      orderId: deriveOrderId(ALICE, 'key-1'),
      status: 'PLACED',
      createdAt: '2020-01-01T00:00:00.000Z',
    });
    expect(body).not.toHaveProperty('caller');
    expect(body).not.toHaveProperty('fingerprint');
    expect(body).not.toHaveProperty('version');
    expect(idempotencyUpdates()).toHaveLength(1);
  });
});

describe('replay', () => {
  test('same caller, key and payload: the identical status and body plus Idempotent-Replayed, no new write', async () => {
    const first = await post();
    const stored = idempotencyUpdates()[0].ExpressionAttributeValues![':response_data'];
    ddb.resetHistory();
    doc.resetHistory();
    idempotencyRecordExists((attempted) => ({ ...attempted, status: { S: 'COMPLETED' }, data: stored }));

    const replay = await post();

    expect(replay.statusCode).toBe(201);
    expect(replay.body).toBe(first.body);
    expect(replay.headers['Idempotent-Replayed']).toBe('true');
    expect(replay.headers.Location).toBe(first.headers.Location);
    expect(replay.headers['Content-Type']).toBe('application/json');
    expect(transactions()).toHaveLength(0);
    expect(idempotencyUpdates()).toHaveLength(0);
    expect(idempotencyDeletes()).toHaveLength(0);
    expect(allCalls()).toBe(1);
  });
});

describe('400 Bad Request', () => {
  test.each([
    ['no Idempotency-Key', undefined],
    ['an empty key', '""'],
    ['a 256-character key', 'k'.repeat(256)],
    ['a non-ASCII key', '"clé"'],
    ['two Idempotency-Key lines', ['"a"', '"b"']],
    ['junk after the quoted key', '"a"b'],
  ])('%s: problem, and no DynamoDB call at all', async (_name, key) => {
    const response = await post({ key });

    const problem = expectProblem(response, 400);
    expect(problem.title).toBe('Invalid Idempotency-Key');
    expect(allCalls()).toBe(0);
  });

  test('an invalid body: problem with the field errors, and no DynamoDB call at all', async () => {
    const response = await post({ body: { customerId: '', items: [{ sku: 'a', quantity: 0, unitPriceCents: 1 }] } });

    const problem = expectProblem(response, 400);
    expect(problem.title).toBe('Invalid order');
    expect(problem.errors?.map((e) => e.field).sort()).toEqual(['customerId', 'items.0.quantity']);
    expect(allCalls()).toBe(0);
  });

  test.each([
    ['invalid JSON', '{"customerId":'],
    [
      'more than 50 items',
      { customerId: 'c', items: Array.from({ length: 51 }, () => ({ sku: 's', quantity: 1, unitPriceCents: 1 })) },
    ],
    ['more than 64 KiB', JSON.stringify(VALID_ORDER).replace('{', `{${' '.repeat(64 * 1024)}`)],
  ])('%s: problem, and nothing stored', async (_name, body) => {
    const response = await post({ body });

    expect(expectProblem(response, 400).errors?.length).toBeGreaterThan(0);
    expect(allCalls()).toBe(0);
  });
});

describe('identifiers are limited to what every queue, key and path can carry', () => {
  const withCustomer = (customerId: string) => ({ ...VALID_ORDER, customerId });
  const withSku = (sku: string) => ({ ...VALID_ORDER, items: [{ ...VALID_ORDER.items[0], sku }] });

  test.each([
    ['U+FFFE', 'cust-\uFFFE'],
    ['U+FFFF', '\uFFFFcust'],
    ['a space', 'cust 1'],
    ['65 characters', 'c'.repeat(65)],
    ['an empty id', ''],
  ])('a customerId with %s: 400 with the field error, nothing stored', async (_name, customerId) => {
    const response = await post({ body: withCustomer(customerId) });

    const problem = expectProblem(response, 400);
    expect(problem.errors?.map((e) => e.field)).toEqual(['customerId']);
    expect(allCalls()).toBe(0);
  });

  test.each([
    ['U+FFFE', 'sku-\uFFFE'],
    ['U+FFFF', 'sku-\uFFFF'],
    ['a space', 'sku 1'],
    ['65 characters', 's'.repeat(65)],
    ['an empty id', ''],
  ])('a sku with %s: 400 with the field error, nothing stored', async (_name, sku) => {
    const response = await post({ body: withSku(sku) });

    const problem = expectProblem(response, 400);
    expect(problem.errors?.map((e) => e.field)).toEqual(['items.0.sku']);
    expect(allCalls()).toBe(0);
  });

  test('the edge characters and 64 characters are accepted', async () => {
    const edge = 'Az09._:-';

    const response = await post({
      body: { customerId: edge + 'c'.repeat(56), items: [{ ...VALID_ORDER.items[0], sku: edge }] },
    });

    expect(response.statusCode).toBe(201);
    expect(JSON.parse(response.body)).toMatchObject({ customerId: edge + 'c'.repeat(56), items: [{ sku: edge }] });
  });
});

describe('409 Conflict', () => {
  test('the same key is still in progress: Retry-After, and the lock it does not own is left alone', async () => {
    idempotencyRecordExists((attempted) => ({ ...attempted, status: { S: 'INPROGRESS' } }));

    const response = await post();

    expectProblem(response, 409);
    expect(Number(response.headers['Retry-After'])).toBeGreaterThan(0);
    expect(transactions()).toHaveLength(0);
    expect(idempotencyDeletes()).toHaveLength(0);
    expect(idempotencyUpdates()).toHaveLength(0);
  });
});

describe('422 Unprocessable Content', () => {
  test('the key was used with a different payload', async () => {
    idempotencyRecordExists((attempted) => ({
      ...attempted,
      status: { S: 'COMPLETED' },
      validation: { S: 'hash-of-another-payload' },
      data: { M: marshall({ statusCode: 201, headers: {}, body: '{}' }) },
    }));

    const response = await post();

    expect(expectProblem(response, 422).title).toBe('Idempotency-Key reused');
    expect(response.headers['Idempotent-Replayed']).toBeUndefined();
    expect(transactions()).toHaveLength(0);
    expect(idempotencyDeletes()).toHaveLength(0);
  });

  test('the idempotency record is gone but the order the key made has another fingerprint', async () => {
    orderAlreadyExists((attempted) => ({ ...attempted, fingerprint: 'fingerprint-of-another-payload' }));

    const response = await post();

    expectProblem(response, 422);
    // The lock this request took is released; nothing is recorded as a success.
    expect(idempotencyDeletes()).toHaveLength(1);
    expect(idempotencyUpdates()).toHaveLength(0);
  });
});

describe('503 Service Unavailable', () => {
  const throttled = () =>
    new ProvisionedThroughputExceededException({ message: 'Rate exceeded', $metadata: { httpStatusCode: 400 } });
  const serverError = () =>
    new InternalServerError({ message: 'Internal server error', $metadata: { httpStatusCode: 500 } });

  test('the idempotency table throttles: nothing written', async () => {
    ddb.on(PutItemCommand).rejects(throttled());

    const response = await post();

    expectProblem(response, 503);
    expect(response.headers['Retry-After']).toBeDefined();
    expect(transactions()).toHaveLength(0);
  });

  test('the order transaction hits a server error: the lock is released so a retry can run', async () => {
    doc.on(TransactWriteCommand).rejects(serverError());

    const response = await post();

    expectProblem(response, 503);
    expect(idempotencyDeletes()).toEqual([expect.objectContaining({ Key: { id: idempotencyPuts()[0].Item!.id } })]);
    expect(idempotencyUpdates()).toHaveLength(0);
  });

  test('the order transaction is cancelled by a conflict, not by our condition', async () => {
    doc.on(TransactWriteCommand).rejects(
      new TransactionCanceledException({
        message: 'Transaction cancelled [None, TransactionConflict]',
        $metadata: { httpStatusCode: 400 },
        CancellationReasons: [
          { Code: 'None' },
          { Code: 'TransactionConflict', Message: 'Transaction is ongoing for the item' },
        ],
      }),
    );

    const response = await post();

    expectProblem(response, 503);
  });

  test('storing the result fails after the order was written: the body promises a safe retry, not "nothing written"', async () => {
    ddb.on(UpdateItemCommand).rejects(serverError());

    const response = await post();

    const problem = expectProblem(response, 503);
    expect(transactions()).toHaveLength(1);
    expect(problem.detail).not.toMatch(/nothing was (half-)?written/i);
    expect(problem.detail).toMatch(/may or may not have taken effect/);
    expect(problem.detail).toMatch(/same Idempotency-Key returns the same order/);
  });
});

describe('error classes of the order transaction', () => {
  test.each(RETRYABLE_WRITE_ERRORS)(
    '%s: 503 with Retry-After, and the lock is released for the retry',
    async (_name, error) => {
      doc.on(TransactWriteCommand).rejects(error());

      const response = await post();

      expectProblem(response, 503);
      expect(response.headers['Retry-After']).toBe('1');
      expect(idempotencyDeletes()).toHaveLength(1);
    },
  );

  test.each(BUG_WRITE_ERRORS)('%s: 500 (a bug; retrying cannot help), no Retry-After', async (_name, error) => {
    doc.on(TransactWriteCommand).rejects(error());

    const response = await post();

    expectProblem(response, 500);
    expect(response.headers['Retry-After']).toBeUndefined();
  });
});

describe('500 Internal Server Error', () => {
  test('an unexpected bug: a generic problem, no stack trace or error text', async () => {
    doc
      .on(TransactWriteCommand)
      .rejects(new TypeError("Cannot read properties of undefined (reading 'secretInternalField')"));

    const response = await post();

    const problem = expectProblem(response, 500);
    expect(response.body).not.toContain('secretInternalField');
    expect(response.body).not.toContain('TypeError');
    expect(problem.detail).not.toContain('undefined');
  });
});

describe('403 Forbidden', () => {
  test.each([
    ['no authenticated caller', null],
    ['an identity that is no principal shape (a bare access key id)', 'AKIAIOSFODNN7EXAMPLE'],
    ['a role session ARN without a session name', 'arn:aws:sts::123456789012:assumed-role/OrderWriter/'],
  ])('%s: refused before anything else, nothing stored', async (_name, caller) => {
    const response = await post({ caller });

    expectProblem(response, 403);
    expect(allCalls()).toBe(0);
  });
});

describe('the caller is the principal, not the session, unless the session is a person', () => {
  const ROLE = 'arn:aws:sts::123456789012:assumed-role/OrderWriter';

  test('two sessions of one role: one idempotency record, one order id, scoped to the role', async () => {
    await post({ caller: `${ROLE}/ecs-task-a`, key: '"rotating"' });
    await post({ caller: `${ROLE}/ecs-task-b`, key: '"rotating"' });

    const [first, second] = idempotencyPuts().map((p) => p.Item!);
    expect(second.id).toEqual(first.id);
    const [firstOrder, secondOrder] = transactions().map(orderPutOf);
    expect(secondOrder.orderId).toBe(firstOrder.orderId);
    expect(firstOrder.orderId).toBe(deriveOrderId(ROLE, 'rotating'));
    expect(firstOrder.caller).toBe(ROLE);
  });

  test('two roles are two callers', async () => {
    await post({ caller: `${ROLE}/s1`, key: '"k"' });
    await post({ caller: 'arn:aws:sts::123456789012:assumed-role/OtherWriter/s1', key: '"k"' });

    const [first, second] = idempotencyPuts().map((p) => p.Item!);
    expect(second.id).not.toEqual(first.id);
  });

  test('an IAM Identity Center session is the person (the default rule, the variable unset): two users, two callers', async () => {
    const permissionSet = 'arn:aws:sts::123456789012:assumed-role/AWSReservedSSO_ShopOperators_0123456789abcdef';
    const alice = `${permissionSet}/alice@example.com`;
    const bob = `${permissionSet}/bob@example.com`;

    await post({ caller: alice, key: '"same-key"' });
    await post({ caller: bob, key: '"same-key"' });

    const [first, second] = idempotencyPuts().map((p) => p.Item!);
    expect(second.id).not.toEqual(first.id);
    const [aliceOrder, bobOrder] = transactions().map(orderPutOf);
    expect(aliceOrder.caller).toBe(alice);
    expect(aliceOrder.orderId).toBe(deriveOrderId(alice, 'same-key'));
    expect(bobOrder.caller).toBe(bob);
    expect(transactions()[1].TransactItems![2].Put!.Item!.pk).toBe(`CALLER#${bob}#CUSTOMER#${VALID_ORDER.customerId}`);
  });

  test("a Cognito identity is its identity id, not the pool role's session", async () => {
    const identityId = 'us-east-1:3f2a1b4c-5d6e-4f70-8a9b-0c1d2e3f4a5b';
    const event = apiEvent({
      method: 'POST',
      path: '/orders',
      caller: 'arn:aws:sts::123456789012:assumed-role/Cognito_PoolAuth_Role/CognitoIdentityCredentials',
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': '"k"' },
      body: JSON.stringify(VALID_ORDER),
    });
    event.requestContext.identity.cognitoIdentityId = identityId;

    const response = await handler(event, lambdaContext());

    expect(response.statusCode).toBe(201);
    expect(JSON.parse(response.body).orderId).toBe(deriveOrderId(identityId, 'k'));
    expect(orderPutOf(transactions()[0]).caller).toBe(identityId);
  });
});
