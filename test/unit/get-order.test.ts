import {
  DynamoDBClient,
  InternalServerError,
  ProvisionedThroughputExceededException,
  RequestLimitExceeded,
  ThrottlingException,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { deriveOrderId } from '../../lambdas/shop/domain/order';
import { apiEvent, lambdaContext } from '../support/api-events';
import { expectProblem, useUnitEnvironment, type HttpResult } from '../support/handlers';
import { ALICE, BOB, storedOrderItem, viewOf } from '../support/orders';

/** GET /orders/{orderId}, every status path, with the document client mocked. */
const ddb = mockClient(DynamoDBClient);
const doc = mockClient(DynamoDBDocumentClient);
const ORDERS_TABLE = 'orders-table';

type Handler = (typeof import('../../lambdas/shop/handlers/get-order'))['handler'];
let handler: Handler;

beforeAll(async () => {
  useUnitEnvironment({ ORDERS_TABLE_NAME: ORDERS_TABLE });
  ({ handler } = await import('../../lambdas/shop/handlers/get-order'));
});

beforeEach(() => {
  ddb.reset();
  doc.reset();
  doc.on(GetCommand).resolves({});
});

const ORDER_ID = deriveOrderId(ALICE, 'key-1');

function get(
  orderId: string | null = ORDER_ID,
  caller: string | null = ALICE,
  headers: Record<string, string | string[]> = {},
): Promise<HttpResult> {
  return handler(
    apiEvent({
      method: 'GET',
      path: `/orders/${orderId}`,
      resource: '/orders/{orderId}',
      caller,
      headers,
      pathParameters: orderId === null ? undefined : { orderId },
    }),
    lambdaContext(),
  );
}

const allCalls = () => ddb.calls().length + doc.calls().length;

describe('200 OK', () => {
  test("the caller's own order, as the public view only, read consistently", async () => {
    doc.on(GetCommand).resolves({ Item: storedOrderItem() });

    const response = await get();

    expect(response.statusCode).toBe(200);
    expect(response.headers['Content-Type']).toBe('application/json');
    expect(JSON.parse(response.body)).toEqual(viewOf(storedOrderItem()));
    for (const internal of ['caller', 'fingerprint', 'pk', 'sk', 'entity', 'version']) {
      expect(JSON.parse(response.body)).not.toHaveProperty(internal);
    }
    expect(doc.commandCalls(GetCommand)[0].args[0].input).toEqual({
      TableName: ORDERS_TABLE,
      Key: { pk: `ORDER#${ORDER_ID}`, sk: 'ORDER' },
      ConsistentRead: true,
    });
  });

  test('a cancelled order shows its cancellation time', async () => {
    const cancelled = storedOrderItem({ status: 'CANCELLED', cancelledAt: '2030-01-02T04:00:00.000Z' });
    doc.on(GetCommand).resolves({ Item: cancelled });

    const response = await get();

    expect(JSON.parse(response.body)).toMatchObject({ status: 'CANCELLED', cancelledAt: '2030-01-02T04:00:00.000Z' });
  });

  test.each([
    ['a valid key', '"key-1"'],
    ['an invalid key', '"clé"'],
    ['two key lines', ['"a"', '"b"']],
  ])('an Idempotency-Key on a GET is ignored (%s)', async (_name, key) => {
    doc.on(GetCommand).resolves({ Item: storedOrderItem() });

    const response = await get(ORDER_ID, ALICE, { 'Idempotency-Key': key });

    expect(response.statusCode).toBe(200);
    expect(allCalls()).toBe(1);
  });
});

describe('the caller is the principal, not the session', () => {
  const ROLE = 'arn:aws:sts::123456789012:assumed-role/OrderWriter';

  test('an order placed by one session of a role is visible to another session of it', async () => {
    const orderId = deriveOrderId(ROLE, 'key-1');
    doc.on(GetCommand).resolves({ Item: storedOrderItem({ caller: ROLE, orderId }) });

    const response = await get(orderId, `${ROLE}/credentials-after-rotation`);

    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body).orderId).toBe(orderId);
  });

  test('another role of the same account still sees 404', async () => {
    const orderId = deriveOrderId(ROLE, 'key-1');
    doc.on(GetCommand).resolves({ Item: storedOrderItem({ caller: ROLE, orderId }) });

    const response = await get(orderId, 'arn:aws:sts::123456789012:assumed-role/OtherRole/s1');

    expectProblem(response, 404);
  });
});

describe('404 Not Found', () => {
  test('an unknown order', async () => {
    const response = await get();

    expectProblem(response, 404);
  });

  test("another caller's order looks exactly like an unknown one", async () => {
    const unknown = await get();
    doc.on(GetCommand).resolves({ Item: storedOrderItem({ caller: BOB, orderId: ORDER_ID }) });

    const othersOrder = await get(ORDER_ID, ALICE);

    expectProblem(othersOrder, 404);
    expect(othersOrder.body).toBe(unknown.body);
  });
});

describe('400, 503, 500, 403', () => {
  test.each([['abc'], [`ord_${'g'.repeat(32)}`], [null]])(
    'a malformed orderId %j: problem, and no DynamoDB call',
    async (orderId) => {
      const response = await get(orderId);

      expectProblem(response, 400);
      expect(allCalls()).toBe(0);
    },
  );

  test.each([
    [
      'throttled (provisioned throughput)',
      () => new ProvisionedThroughputExceededException({ message: 'Rate exceeded', $metadata: {} }),
    ],
    [
      'throttled (throttling)',
      () => new ThrottlingException({ message: 'Throughput exceeds the current capacity', $metadata: {} }),
    ],
    [
      'throttled (account request limit)',
      () => new RequestLimitExceeded({ message: 'Request limit exceeded', $metadata: {} }),
    ],
    ['a server error', () => new InternalServerError({ message: 'Internal server error', $metadata: {} })],
    ['a connection reset', () => Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })],
  ])('DynamoDB %s is 503 with Retry-After', async (_name, error) => {
    doc.on(GetCommand).rejects(error());

    const response = await get();

    expectProblem(response, 503);
    expect(response.headers['Retry-After']).toBeDefined();
  });

  test('an unexpected bug is a generic 500 without stack trace or error text', async () => {
    doc.on(GetCommand).rejects(new TypeError('secretInternalField is not a function'));

    const response = await get();

    expectProblem(response, 500);
    expect(response.body).not.toContain('secretInternalField');
  });

  test('no authenticated caller is 403 and touches nothing', async () => {
    const response = await get(ORDER_ID, null);

    expectProblem(response, 403);
    expect(allCalls()).toBe(0);
  });
});
