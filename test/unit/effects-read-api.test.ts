import { DynamoDBClient, ProvisionedThroughputExceededException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { apiEvent, lambdaContext } from '../support/api-events';
import { expectProblem, useUnitEnvironment, type HttpResult } from '../support/handlers';

/**
 * GET /customers/{customerId} and GET /inventory/{sku}: the read models of the
 * two consumers' effects, with the document client mocked.
 */
const ddb = mockClient(DynamoDBClient);
const doc = mockClient(DynamoDBDocumentClient);
const EFFECTS_TABLE = 'effects-table';

type Handler = (typeof import('../../lambdas/entry-points/get-customer'))['handler'];
const handlers = {} as Record<'customer' | 'inventory', Handler>;

beforeAll(async () => {
  useUnitEnvironment({ EFFECTS_TABLE_NAME: EFFECTS_TABLE });
  ({ handler: handlers.customer } = await import('../../lambdas/entry-points/get-customer'));
  ({ handler: handlers.inventory } = await import('../../lambdas/entry-points/get-inventory'));
});

beforeEach(() => {
  ddb.reset();
  doc.reset();
  doc.on(GetCommand).resolves({});
});

afterEach(() => expect(ddb.calls()).toHaveLength(0));

const cases = [
  {
    name: 'customer' as const,
    route: '/customers/{customerId}',
    param: 'customerId',
    id: 'cust-1',
    maxLength: 128,
    key: { pk: 'CUSTOMER#cust-1', sk: 'CUSTOMER' },
    item: { pk: 'CUSTOMER#cust-1', sk: 'CUSTOMER', customerId: 'cust-1', points: 42 },
    body: { customerId: 'cust-1', points: 42 },
    emptyBody: { customerId: 'cust-1', points: 0 },
  },
  {
    name: 'inventory' as const,
    route: '/inventory/{sku}',
    param: 'sku',
    id: 'SKU-A',
    maxLength: 64,
    key: { pk: 'SKU#SKU-A', sk: 'INVENTORY' },
    item: { pk: 'SKU#SKU-A', sk: 'INVENTORY', sku: 'SKU-A', reserved: 7 },
    body: { sku: 'SKU-A', reserved: 7 },
    emptyBody: { sku: 'SKU-A', reserved: 0 },
  },
];

describe.each(cases)('GET $route', (c) => {
  function get(value: string | undefined): Promise<HttpResult> {
    return handlers[c.name](
      apiEvent({
        method: 'GET',
        path: c.route.replace(`{${c.param}}`, value ?? ''),
        resource: c.route,
        pathParameters: value === undefined ? undefined : { [c.param]: value },
      }),
      lambdaContext(),
    );
  }

  test('200 with the stored value, read consistently from the Effects table', async () => {
    doc.on(GetCommand).resolves({ Item: c.item });

    const response = await get(c.id);

    expect(response.statusCode).toBe(200);
    expect(response.headers['Content-Type']).toBe('application/json');
    expect(JSON.parse(response.body)).toEqual(c.body);
    expect(doc.commandCalls(GetCommand).map((call) => call.args[0].input)).toEqual([
      { TableName: EFFECTS_TABLE, Key: c.key, ConsistentRead: true },
    ]);
  });

  test('an item without the counter reads as 0', async () => {
    doc.on(GetCommand).resolves({ Item: c.key });

    const response = await get(c.id);

    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body)).toEqual(c.emptyBody);
  });

  test('404 problem when nothing was ever applied', async () => {
    expectProblem(await get(c.id), 404);
  });

  test.each([
    ['missing', undefined],
    ['empty', ''],
    ['too long', 'x'.repeat(200)],
  ])('400 problem when the id is %s, without reading', async (_what, value) => {
    expectProblem(await get(value), 400);
    expect(doc.calls()).toHaveLength(0);
  });

  test('the longest allowed id is read', async () => {
    await get('x'.repeat(c.maxLength));

    expect(doc.commandCalls(GetCommand)).toHaveLength(1);
  });

  test('503 with Retry-After when DynamoDB throttles', async () => {
    doc.on(GetCommand).rejects(new ProvisionedThroughputExceededException({ message: 'slow down', $metadata: {} }));

    const response = await get(c.id);

    expectProblem(response, 503);
    expect(response.headers['Retry-After']).toBe('1');
  });

  test('500 problem, without internals, on an unexpected error', async () => {
    doc.on(GetCommand).rejects(new TypeError('Cannot read properties of undefined'));

    expectProblem(await get(c.id), 500);
  });
});
