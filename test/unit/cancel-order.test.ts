import {
  DynamoDBClient,
  InternalServerError,
  ProvisionedThroughputExceededException,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { deriveOrderId } from '../../lambdas/shop/domain/order';
import { BUG_WRITE_ERRORS, RETRYABLE_WRITE_ERRORS } from '../support/dependency-errors';
import { apiEvent, lambdaContext } from '../support/api-events';
import { expectProblem, useUnitEnvironment, type HttpResult } from '../support/handlers';
import { ALICE, BOB, storedOrderItem, viewOf } from '../support/orders';

/** POST /orders/{orderId}/cancel, every status path, with the document client mocked. */
const ddb = mockClient(DynamoDBClient);
const doc = mockClient(DynamoDBDocumentClient);
const ORDERS_TABLE = 'orders-table';

type Handler = (typeof import('../../lambdas/shop/handlers/cancel-order'))['handler'];
let handler: Handler;

beforeAll(async () => {
  useUnitEnvironment({ ORDERS_TABLE_NAME: ORDERS_TABLE });
  ({ handler } = await import('../../lambdas/shop/handlers/cancel-order'));
});

beforeEach(() => {
  ddb.reset();
  doc.reset();
  doc.on(GetCommand).resolves({});
  doc.on(TransactWriteCommand).resolves({});
});

const ORDER_ID = deriveOrderId(ALICE, 'key-1');

function cancel(
  orderId: string | null = ORDER_ID,
  caller: string | null = ALICE,
  headers: Record<string, string> = {},
): Promise<HttpResult> {
  return handler(
    apiEvent({
      method: 'POST',
      path: `/orders/${orderId}/cancel`,
      resource: '/orders/{orderId}/cancel',
      caller,
      headers,
      pathParameters: orderId === null ? undefined : { orderId },
    }),
    lambdaContext(),
  );
}

const transactions = () => doc.commandCalls(TransactWriteCommand).map((c) => c.args[0].input);
const allCalls = () => ddb.calls().length + doc.calls().length;

describe('200 OK', () => {
  test('cancels a placed order: conditional state change plus the OrderCancelled outbox item, in one transaction', async () => {
    doc.on(GetCommand).resolves({ Item: storedOrderItem() });
    const before = Date.now();

    const response = await cancel();

    expect(response.statusCode).toBe(200);
    expect(response.headers['Content-Type']).toBe('application/json');
    const body = JSON.parse(response.body);
    expect(body).toEqual({ ...viewOf(storedOrderItem()), status: 'CANCELLED', cancelledAt: expect.any(String) });
    expect(Date.parse(body.cancelledAt)).toBeGreaterThanOrEqual(before - 1);

    const [read] = doc.commandCalls(GetCommand).map((c) => c.args[0].input);
    expect(read).toMatchObject({
      TableName: ORDERS_TABLE,
      Key: { pk: `ORDER#${ORDER_ID}`, sk: 'ORDER' },
      ConsistentRead: true,
    });
    const [transaction] = transactions();
    expect(transaction.TransactItems).toHaveLength(2);
    const [update, outbox] = transaction.TransactItems!;
    expect(update.Update).toMatchObject({
      TableName: ORDERS_TABLE,
      Key: { pk: `ORDER#${ORDER_ID}`, sk: 'ORDER' },
      ConditionExpression: '#status = :placed',
      ExpressionAttributeValues: expect.objectContaining({
        ':placed': 'PLACED',
        ':cancelled': 'CANCELLED',
        ':at': body.cancelledAt,
      }),
    });
    expect(outbox.Put).toMatchObject({
      TableName: ORDERS_TABLE,
      ConditionExpression: 'attribute_not_exists(pk)',
      Item: {
        pk: `ORDER#${ORDER_ID}`,
        sk: `OUTBOX#${ORDER_ID}.cancelled`,
        eventId: `${ORDER_ID}.cancelled`,
        type: 'OrderCancelled',
        pendingShard: expect.any(String),
        event: expect.objectContaining({
          type: 'OrderCancelled',
          entityId: ORDER_ID,
          version: 2,
          occurredAt: body.cancelledAt,
        }),
      },
    });
  });

  test('cancelling an already cancelled order returns it as it is and writes nothing', async () => {
    const cancelled = storedOrderItem({ status: 'CANCELLED', cancelledAt: '2030-01-02T04:00:00.000Z' });
    doc.on(GetCommand).resolves({ Item: cancelled });

    const response = await cancel();

    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body)).toEqual(viewOf(cancelled));
    expect(transactions()).toHaveLength(0);
  });

  test('losing a race with a concurrent cancel still answers with the cancelled order', async () => {
    const cancelledMeanwhile = storedOrderItem({ status: 'CANCELLED', cancelledAt: '2030-01-02T04:00:00.000Z' });
    doc.on(GetCommand).resolves({ Item: storedOrderItem() });
    doc.on(TransactWriteCommand).rejects(
      new TransactionCanceledException({
        message: 'Transaction cancelled [ConditionalCheckFailed, ConditionalCheckFailed]',
        $metadata: { httpStatusCode: 400 },
        CancellationReasons: [
          { Code: 'ConditionalCheckFailed', Item: marshall(cancelledMeanwhile) },
          { Code: 'ConditionalCheckFailed' },
        ],
      }),
    );

    const response = await cancel();

    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body)).toEqual(viewOf(cancelledMeanwhile));
  });

  test('an Idempotency-Key is optional and changes nothing', async () => {
    doc.on(GetCommand).resolves({ Item: storedOrderItem() });

    const response = await cancel(ORDER_ID, ALICE, { 'Idempotency-Key': 'not "a valid key' });

    expect(response.statusCode).toBe(200);
    expect(transactions()).toHaveLength(1);
  });
});

describe('404 Not Found', () => {
  test('an unknown order: nothing written', async () => {
    const response = await cancel();

    expectProblem(response, 404);
    expect(transactions()).toHaveLength(0);
  });

  test("another caller's order is not found either, and is not cancelled", async () => {
    doc.on(GetCommand).resolves({ Item: storedOrderItem({ caller: BOB, orderId: ORDER_ID }) });

    const response = await cancel(ORDER_ID, ALICE);

    expectProblem(response, 404);
    expect(response.body).not.toContain(BOB);
    expect(transactions()).toHaveLength(0);
  });
});

describe('400 Bad Request', () => {
  test.each([
    ['not an order id', 'abc'],
    ['upper-case hex', `ord_${'A'.repeat(32)}`],
    ['too short', `ord_${'a'.repeat(31)}`],
    ['too long', `ord_${'a'.repeat(33)}`],
    ['an injection attempt', 'ord_00000000000000000000000000000000#OUTBOX'],
    ['missing', null],
  ])('a malformed orderId (%s): problem, and no DynamoDB call', async (_name, orderId) => {
    const response = await cancel(orderId);

    expectProblem(response, 400);
    expect(allCalls()).toBe(0);
  });
});

describe('503 Service Unavailable', () => {
  test('the read is throttled', async () => {
    doc.on(GetCommand).rejects(new ProvisionedThroughputExceededException({ message: 'Rate exceeded', $metadata: {} }));

    const response = await cancel();

    expectProblem(response, 503);
    expect(response.headers['Retry-After']).toBeDefined();
    expect(transactions()).toHaveLength(0);
  });

  test('the transaction hits a server error', async () => {
    doc.on(GetCommand).resolves({ Item: storedOrderItem() });
    doc.on(TransactWriteCommand).rejects(new InternalServerError({ message: 'Internal server error', $metadata: {} }));

    const response = await cancel();

    expectProblem(response, 503);
  });

  test('the transaction is cancelled by a conflict, not by our condition', async () => {
    doc.on(GetCommand).resolves({ Item: storedOrderItem() });
    doc.on(TransactWriteCommand).rejects(
      new TransactionCanceledException({
        message: 'Transaction cancelled [TransactionConflict, None]',
        $metadata: {},
        CancellationReasons: [{ Code: 'TransactionConflict' }, { Code: 'None' }],
      }),
    );

    const response = await cancel();

    expectProblem(response, 503);
  });
});

describe('error classes of the cancel transaction', () => {
  beforeEach(() => {
    doc.on(GetCommand).resolves({ Item: storedOrderItem() });
  });

  test.each(RETRYABLE_WRITE_ERRORS)('%s: 503 with Retry-After', async (_name, error) => {
    doc.on(TransactWriteCommand).rejects(error());

    const response = await cancel();

    expectProblem(response, 503);
    expect(response.headers['Retry-After']).toBe('1');
  });

  test.each(BUG_WRITE_ERRORS)('%s: 500 (a bug; retrying cannot help), no Retry-After', async (_name, error) => {
    doc.on(TransactWriteCommand).rejects(error());

    const response = await cancel();

    expectProblem(response, 500);
    expect(response.headers['Retry-After']).toBeUndefined();
  });
});

describe('500 and 403', () => {
  test('an unexpected bug is a generic 500 without stack trace or error text', async () => {
    doc.on(GetCommand).rejects(new RangeError('Invalid time value in secretInternalField'));

    const response = await cancel();

    expectProblem(response, 500);
    expect(response.body).not.toContain('secretInternalField');
    expect(response.body).not.toContain('RangeError');
  });

  test('no authenticated caller is 403 and touches nothing', async () => {
    const response = await cancel(ORDER_ID, null);

    expectProblem(response, 403);
    expect(allCalls()).toBe(0);
  });
});
