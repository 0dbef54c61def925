import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { customerKey } from '../../lambdas/shop/aws/effects-table';
import { apiEvent, lambdaContext, VALID_ORDER } from '../support/api-events';
import { useApiOnEmulators, type ApiHandler } from '../support/api-on-emulators';
import { scanAll, testDynamoDbClient } from '../support/dynamodb';

/**
 * GET /customers/{customerId} is scoped to the callers who placed orders for
 * the customer, against DynamoDB Local with the stack's tables: the order
 * transaction records the caller's access, the read checks it before it reads
 * the points, and to anyone else the customer is 404 exactly like an unknown
 * one. The caller rule is a stage's with SAML-federated people, as the stack
 * sets it (`-c humanRolePatterns=AWSReservedSSO_*,Okta-*`): sessions of
 * Identity Center permission sets and of `Okta-*` roles are people, every
 * other role is one caller.
 */
const api = useApiOnEmulators(['create-order', 'get-customer'] as const);
const tables = {
  get names() {
    return api.tables();
  },
};
const createOrder: ApiHandler = (event, context) => api.handler('create-order')(event, context);
const getCustomer: ApiHandler = (event, context) => api.handler('get-customer')(event, context);

let seq = 0;
/** A fresh id, so tests never share callers or customers. */
function unique(prefix: string): string {
  seq += 1;
  return `${prefix}-${seq}-${Date.now().toString(36)}`;
}
const iamUser = () => `arn:aws:iam::123456789012:user/${unique('customer-scope')}`;

async function place(caller: string, customerId: string, key = unique('key')) {
  const response = await createOrder(
    apiEvent({
      method: 'POST',
      path: '/orders',
      caller,
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': `"${key}"` },
      body: JSON.stringify({ ...VALID_ORDER, customerId }),
    }),
    lambdaContext(),
  );
  expect(response.statusCode).toBe(201);
  return JSON.parse(response.body) as { orderId: string };
}

function read(caller: string, customerId: string) {
  return getCustomer(
    apiEvent({
      method: 'GET',
      path: `/customers/${customerId}`,
      resource: '/customers/{customerId}',
      caller,
      pathParameters: { customerId },
    }),
    lambdaContext(),
  );
}

/**
 * The loyalty consumer's effect, as it leaves it: the points on the Effects table of the customer
 * `customerId` of `caller` (the tenant of the order's events), or, with no caller given, of every
 * caller that placed an order for it (read from the stored orders, so the caller rule's answer is used).
 */
async function creditPoints(customerId: string, points: number, caller?: string): Promise<void> {
  const callers =
    caller === undefined
      ? [
          ...new Set(
            (await scanAll(tables.names.Orders))
              .filter((i) => i.entity === 'ORDER' && i.customerId === customerId)
              .map((i) => String(i.caller)),
          ),
        ]
      : [caller];
  const client = testDynamoDbClient();
  try {
    for (const tenant of callers)
      await client.send(
        new PutItemCommand({
          TableName: tables.names.Effects,
          Item: marshall({ ...customerKey(tenant, customerId), customerId, points }),
        }),
      );
  } finally {
    client.destroy();
  }
}

/** What `run` answered, and the DynamoDB calls it made. */
async function recordingCalls<T>(run: () => Promise<T>): Promise<[T, string[]]> {
  api.resetCalls();
  const result = await run();
  const calls = api.calls().map((c) => c.command);
  api.resetCalls();
  return [result, calls];
}

const itemCounts = async () => ({
  orders: (await scanAll(tables.names.Orders)).length,
  effects: (await scanAll(tables.names.Effects)).length,
});

function expectNotFoundProblem(response: { statusCode: number; headers: Record<string, string>; body: string }) {
  expect(response.statusCode).toBe(404);
  expect(response.headers['Content-Type']).toBe('application/problem+json');
  const body = JSON.parse(response.body) as Record<string, unknown>;
  expect(body).toEqual({
    type: 'urn:problem-type:not-found',
    title: 'Not Found',
    status: 404,
    detail: expect.any(String),
  });
  return body;
}

test('caller A places an order for c1: A reads c1 (200); B gets 404 problem+json, like an unknown customer; the reads write nothing', async () => {
  const [a, b] = [iamUser(), iamUser()];
  const c1 = unique('c1');
  await place(a, c1);
  await creditPoints(c1, 12);
  const before = await itemCounts();

  const [byOwner, ownerCalls] = await recordingCalls(() => read(a, c1));
  const [byOther, otherCalls] = await recordingCalls(() => read(b, c1));
  const unknown = await read(b, unique('never-ordered'));

  expect(byOwner.statusCode).toBe(200);
  expect(JSON.parse(byOwner.body)).toEqual({ customerId: c1, points: 12 });
  const problem = expectNotFoundProblem(byOther);
  const unknownProblem = expectNotFoundProblem(unknown);
  expect({ ...problem, detail: undefined }).toEqual({ ...unknownProblem, detail: undefined });
  expect(byOther.body).not.toContain('12');
  expect(byOther.body).not.toContain(a);
  // The owner: the access check, then the points. The other caller: the access check only.
  expect(ownerCalls).toEqual(['QueryCommand', 'GetItemCommand']);
  expect(otherCalls).toEqual(['QueryCommand']);
  expect(await itemCounts()).toEqual(before);
});

test('right after placing, before any points, the owner gets the same 404 as anyone else (read consistently)', async () => {
  const [a, b] = [iamUser(), iamUser()];
  const c1 = unique('c1');
  await place(a, c1);

  const owner = expectNotFoundProblem(await read(a, c1));
  const other = expectNotFoundProblem(await read(b, c1));

  expect(other).toEqual(owner);
  // Once the points are there, the owner reads them at once; the other caller still cannot.
  await creditPoints(c1, 3);
  expect((await read(a, c1)).statusCode).toBe(200);
  expect((await read(b, c1)).statusCode).toBe(404);
});

test('a customer id ordered for by two callers is two customers: each reads only the points its own orders earned', async () => {
  const [a, b] = [iamUser(), iamUser()];
  const shared = unique('shared');
  const first = await place(a, shared);
  const second = await place(a, shared);
  await place(b, shared);
  await creditPoints(shared, 30, a);
  await creditPoints(shared, 5, b);

  const [byA, byB] = [await read(a, shared), await read(b, shared)];

  expect(JSON.parse(byA.body)).toEqual({ customerId: shared, points: 30 });
  expect(JSON.parse(byB.body)).toEqual({ customerId: shared, points: 5 });
  const accessOfA = (await scanAll(tables.names.Orders)).filter((i) => i.pk === `CALLER#${a}#CUSTOMER#${shared}`);
  expect(accessOfA.map((i) => i.sk).sort()).toEqual([`ORDER#${first.orderId}`, `ORDER#${second.orderId}`].sort());
});

test('a replay of the order writes no second access item', async () => {
  const a = iamUser();
  const c1 = unique('c1');
  const key = unique('replayed');
  await place(a, c1, key);
  const before = await itemCounts();

  await place(a, c1, key);

  expect(await itemCounts()).toEqual(before);
});

test('people: two users of one Identity Center permission set are two callers; a workload role is one', async () => {
  const permissionSet = `arn:aws:sts::123456789012:assumed-role/AWSReservedSSO_ShopOperators_${unique('0a1b')}`;
  const workload = `arn:aws:sts::123456789012:assumed-role/${unique('OrderService')}`;
  const [c1, c2] = [unique('c1'), unique('c2')];
  await place(`${permissionSet}/alice@example.com`, c1);
  await place(`${workload}/i-0abc123def4567890`, c2);
  await creditPoints(c1, 5);
  await creditPoints(c2, 7);

  // Alice on refreshed credentials: the same session name, so the same caller.
  expect((await read(`${permissionSet}/alice@example.com`, c1)).statusCode).toBe(200);
  // Bob, through the same permission set: another person.
  expectNotFoundProblem(await read(`${permissionSet}/bob@example.com`, c1));
  // The workload after a credential rotation: a new session name, the same caller.
  expect((await read(`${workload}/botocore-session-1700000000`, c2)).statusCode).toBe(200);
});

test('the rule comes from the stage: two users of one SAML role are two callers, for the order and for the read', async () => {
  const samlRole = `arn:aws:sts::123456789012:assumed-role/Okta-${unique('ShopOperators')}`;
  const [jane, john] = [`${samlRole}/jane.doe@example.com`, `${samlRole}/john.roe@example.com`];
  const c1 = unique('c1');
  const { orderId } = await place(jane, c1);
  await creditPoints(c1, 9);

  expect((await read(jane, c1)).statusCode).toBe(200);
  expectNotFoundProblem(await read(john, c1));
  // create-order read the same rule: the order and its access belong to Jane, not to the role.
  const items = await scanAll(tables.names.Orders);
  expect(items.find((i) => i.entity === 'ORDER' && i.orderId === orderId)?.caller).toBe(jane);
  expect(items.filter((i) => i.sk === `ORDER#${orderId}`).map((i) => i.pk)).toEqual([`CALLER#${jane}#CUSTOMER#${c1}`]);
});
