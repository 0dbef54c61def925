import { customerKey } from '../../lambdas/shop/aws/effects-table';
import { DynamoDBClient, ProvisionedThroughputExceededException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { apiEvent, lambdaContext } from '../support/api-events';
import { expectProblem, useUnitEnvironment, type HttpResult } from '../support/handlers';

/**
 * GET /customers/{customerId} and GET /inventory/{sku}: the read models of the
 * two consumers' effects, with the document client mocked. A customer is
 * scoped to the callers who placed orders for it (an access item in the Orders
 * table); stock is shared by every caller.
 */
const ddb = mockClient(DynamoDBClient);
const doc = mockClient(DynamoDBDocumentClient);
const EFFECTS_TABLE = 'effects-table';
const ORDERS_TABLE = 'orders-table';
const ALICE = 'arn:aws:iam::123456789012:user/alice';
const BOB = 'arn:aws:iam::123456789012:user/bob';
const SAML_ROLE = 'arn:aws:sts::123456789012:assumed-role/Okta-ShopOperators';

type Handler = (typeof import('../../lambdas/shop/handlers/get-customer'))['handler'];
const handlers = {} as Record<'customer' | 'inventory', Handler>;

beforeAll(async () => {
  useUnitEnvironment({
    EFFECTS_TABLE_NAME: EFFECTS_TABLE,
    ORDERS_TABLE_NAME: ORDERS_TABLE,
    // As the stack sets it for a stage with SAML-federated people (-c humanRolePatterns=...).
    HUMAN_ROLE_PATTERNS: 'AWSReservedSSO_*,Okta-*',
  });
  ({ handler: handlers.customer } = await import('../../lambdas/shop/handlers/get-customer'));
  ({ handler: handlers.inventory } = await import('../../lambdas/shop/handlers/get-inventory'));
});

/** The callers who placed an order for a customer, as the Orders table's access partitions hold them. */
let accessPartitions: Set<string>;

beforeEach(() => {
  ddb.reset();
  doc.reset();
  doc.on(GetCommand).resolves({});
  accessPartitions = new Set([`CALLER#${ALICE}#CUSTOMER#cust-1`, `CALLER#${ALICE}#CUSTOMER#${'x'.repeat(64)}`]);
  doc.on(QueryCommand).callsFake((input: QueryCommandInput) => {
    const pk = String(input.ExpressionAttributeValues?.[':pk']);
    return { Items: accessPartitions.has(pk) ? [{ pk }] : [], Count: accessPartitions.has(pk) ? 1 : 0 };
  });
});

afterEach(() => expect(ddb.calls()).toHaveLength(0));

const cases = [
  {
    name: 'customer' as const,
    route: '/customers/{customerId}',
    param: 'customerId',
    id: 'cust-1',
    maxLength: 64,
    // Alice's customer cust-1: the points item is scoped to the caller that ordered for it.
    key: customerKey(ALICE, 'cust-1'),
    item: { ...customerKey(ALICE, 'cust-1'), customerId: 'cust-1', points: 42 },
    body: { customerId: 'cust-1', points: 42 },
    emptyBody: { customerId: 'cust-1', points: 0 },
    /** The access check before the points, or nothing before the read of a shared model. */
    readsBefore: 1,
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
    readsBefore: 0,
  },
];

function request(
  name: 'customer' | 'inventory',
  route: string,
  param: string,
  value: string | undefined,
  caller: string | null = ALICE,
): Promise<HttpResult> {
  return handlers[name](
    apiEvent({
      method: 'GET',
      path: route.replace(`{${param}}`, value ?? ''),
      resource: route,
      caller,
      pathParameters: value === undefined ? undefined : { [param]: value },
    }),
    lambdaContext(),
  );
}

const getCustomer = (customerId: string | undefined, caller: string | null = ALICE) =>
  request('customer', '/customers/{customerId}', 'customerId', customerId, caller);

describe.each(cases)('GET $route', (c) => {
  const get = (value: string | undefined) => request(c.name, c.route, c.param, value);

  test('200 with the stored value, read consistently from the Effects table', async () => {
    doc.on(GetCommand).resolves({ Item: c.item });

    const response = await get(c.id);

    expect(response.statusCode).toBe(200);
    expect(response.headers['Content-Type']).toBe('application/json');
    expect(JSON.parse(response.body)).toEqual(c.body);
    expect(doc.commandCalls(GetCommand).map((call) => call.args[0].input)).toEqual([
      { TableName: EFFECTS_TABLE, Key: c.key, ConsistentRead: true },
    ]);
    expect(doc.commandCalls(QueryCommand)).toHaveLength(c.readsBefore);
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
    ['one character too long', 'x'.repeat(65)],
  ])('400 problem when the id is %s, without reading', async (_what, value) => {
    expectProblem(await get(value), 400);
    expect(doc.calls()).toHaveLength(0);
  });

  test.each([
    ['a # (on the customer route it would reach into another access partition)', 'c1#CUSTOMER#c2'],
    ['a slash', 'c1/c2'],
    ['a space', 'c 1'],
    ['non-ASCII', 'clienté'],
  ])('400 problem for an id outside the identifier set, %s, naming the rule, without reading', async (_what, id) => {
    const problem = expectProblem(await get(id), 400);

    expect(problem.detail).toBe(`${c.param} must be 1 to 64 characters of ASCII letters, digits and . _ : -.`);
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

describe('GET /customers/{customerId} is scoped to the callers who placed orders for the customer', () => {
  test('the access check: a consistent query of the caller and customer access partition, before the points', async () => {
    doc.on(GetCommand).resolves({ Item: cases[0].item });

    await getCustomer('cust-1');

    const [query] = doc.commandCalls(QueryCommand).map((call) => call.args[0].input);
    expect(query).toEqual({
      TableName: ORDERS_TABLE,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': `CALLER#${ALICE}#CUSTOMER#cust-1` },
      ProjectionExpression: 'pk',
      Limit: 1,
      ConsistentRead: true,
    });
    // The access check came first.
    expect(doc.calls().map((call) => call.args[0].constructor.name)).toEqual(['QueryCommand', 'GetCommand']);
  });

  test("another caller's customer is 404, the same problem as an unknown customer, and its points are never read", async () => {
    doc.on(GetCommand).resolves({ Item: cases[0].item });

    const othersCustomer = await getCustomer('cust-1', BOB);
    const unknown = await getCustomer('cust-unknown', BOB);

    const problem = expectProblem(othersCustomer, 404);
    expect(JSON.parse(unknown.body)).toEqual({ ...problem, detail: problem.detail.replace('cust-1', 'cust-unknown') });
    expect(othersCustomer.body).not.toContain('42');
    expect(othersCustomer.body).not.toContain(ALICE);
    expect(doc.commandCalls(GetCommand)).toHaveLength(0);
  });

  test("the caller's own customer with no points yet is word for word the same 404 as another caller's", async () => {
    const noPointsYet = await getCustomer('cust-1');
    const notTheirs = await getCustomer('cust-1', BOB);

    expect(JSON.parse(notTheirs.body)).toEqual(expectProblem(noPointsYet, 404));
    // Only the own customer's points were read.
    expect(doc.commandCalls(GetCommand)).toHaveLength(1);
  });

  test('403 problem without a caller, before any read', async () => {
    expectProblem(await getCustomer('cust-1', null), 403);
    expect(doc.calls()).toHaveLength(0);
  });

  test('503 when the access check is throttled, and the points are not read', async () => {
    doc.on(QueryCommand).rejects(new ProvisionedThroughputExceededException({ message: 'slow down', $metadata: {} }));

    expectProblem(await getCustomer('cust-1'), 503);
    expect(doc.commandCalls(GetCommand)).toHaveLength(0);
  });

  test('the caller rule comes from the environment: two people of one SAML role are two scopes', async () => {
    const jane = `${SAML_ROLE}/jane@example.com`;
    accessPartitions.add(`CALLER#${jane}#CUSTOMER#cust-1`);
    doc.on(GetCommand).resolves({ Item: cases[0].item });

    const janeReads = await getCustomer('cust-1', jane);
    const johnReads = await getCustomer('cust-1', `${SAML_ROLE}/john@example.com`);

    expect(janeReads.statusCode).toBe(200);
    expectProblem(johnReads, 404);
    expect(doc.commandCalls(QueryCommand).map((call) => call.args[0].input.ExpressionAttributeValues?.[':pk'])).toEqual(
      [`CALLER#${jane}#CUSTOMER#cust-1`, `CALLER#${SAML_ROLE}/john@example.com#CUSTOMER#cust-1`],
    );
  });
});

describe("GET /inventory/{sku} is shared stock, not a caller's data", () => {
  test('every caller reads the same number, without an access check', async () => {
    doc.on(GetCommand).resolves({ Item: cases[1].item });

    const alice = await request('inventory', '/inventory/{sku}', 'sku', 'SKU-A', ALICE);
    const bob = await request('inventory', '/inventory/{sku}', 'sku', 'SKU-A', BOB);

    expect(alice.body).toBe(bob.body);
    expect(alice.statusCode).toBe(200);
    expect(doc.commandCalls(QueryCommand)).toHaveLength(0);
  });
});
