import {
  localRoleSessionToken,
  signedFetch,
  type SignedRequestOptions,
} from '@exactly-once/tools/local-runtime/api/sign';
import type { LocalRuntime } from '@exactly-once/tools/local-runtime/runtime';
import { eventually, startSynthesizedStack } from './fixtures';

/**
 * The shop's own HTTP API on its stack, as `npm start` runs it: an order's effects through both
 * consumers (loyalty points, reserved stock), and which caller may read and cancel an order. (What holds
 * for any domain on the application's stack: end-to-end.test.ts, caller-scope.test.ts.)
 * @reachesExample drives the example's HTTP API on its stack (startSynthesizedStack): removed with the example (npm run new:domain).
 */
let runtime: LocalRuntime;
let base: string;

beforeAll(async () => {
  runtime = await startSynthesizedStack();
  base = runtime.outputs.apiUrl!;
}, 180_000);

afterAll(async () => {
  await runtime?.stop();
});

type Credentials = Pick<SignedRequestOptions, 'accessKeyId' | 'sessionToken'>;

/** Temporary credentials of one session of a role, as STS would hand them out (each session its own key). */
function roleSession(role: string, session: string): Credentials {
  return {
    accessKeyId: `ASIA${session.toUpperCase().replace(/[^A-Z0-9]/g, '')}`,
    sessionToken: localRoleSessionToken(role, session),
  };
}

async function call(method: string, p: string, credentials: Credentials, extra: Partial<SignedRequestOptions> = {}) {
  const response = await signedFetch(`${base}${p}`, { method, ...credentials, ...extra });
  return { status: response.status, headers: response.headers, body: await response.text() };
}

const suffix = Date.now().toString(36);
const order = (customerId: string, sku: string, quantity: number, unitPriceCents: number) =>
  JSON.stringify({ customerId, items: [{ sku, quantity, unitPriceCents }] });
const placeOrder = (credentials: Credentials, key: string, body = order(`cust-${suffix}`, `sku-${suffix}`, 1, 500)) =>
  call('POST', '/orders', credentials, { body, headers: { 'Idempotency-Key': `"${key}"` } });

test('an order placed (201) is applied by both consumers: its loyalty points and its reserved stock', async () => {
  // Arrange
  const [customerId, sku] = [`cust-e-${suffix}`, `sku-e-${suffix}`];

  // Act
  const placed = await placeOrder({ accessKeyId: 'AKIAE2E' }, `e2e-${suffix}`, order(customerId, sku, 3, 1250));
  const get = async (p: string) => {
    const response = await call('GET', p, { accessKeyId: 'AKIAE2E' });
    return response.status === 200 ? (JSON.parse(response.body) as Record<string, unknown>) : undefined;
  };
  // Generous bounds: the relay and both consumers may all cold-start on a busy machine first.
  const customer = await eventually(() => get(`/customers/${customerId}`), 90_000, 'loyalty points');
  const inventory = await eventually(() => get(`/inventory/${sku}`), 90_000, 'the stock reservation');

  // Assert
  expect(placed.status).toBe(201);
  const { orderId, totalCents } = JSON.parse(placed.body) as { orderId: string; totalCents: number };
  expect(placed.headers.get('location')).toBe(`/orders/${orderId}`);
  expect(customer).toMatchObject({ customerId, points: Math.floor(totalCents / 100) });
  expect(inventory).toMatchObject({ sku, reserved: 3 });
}, 240_000);

test('an order placed by one session is readable and cancellable from another session of the role', async () => {
  // Arrange
  const placed = await placeOrder(roleSession('OrderWriter', 'lambda-1'), `read-${suffix}`);
  const { orderId } = JSON.parse(placed.body) as { orderId: string };

  // Act
  const read = await call('GET', `/orders/${orderId}`, roleSession('OrderWriter', 'lambda-2'));
  const cancelled = await call('POST', `/orders/${orderId}/cancel`, roleSession('OrderWriter', 'cli-session'));

  // Assert
  expect(placed.status).toBe(201);
  expect(read.status).toBe(200);
  expect(JSON.parse(read.body)).toEqual(JSON.parse(placed.body));
  expect(cancelled.status).toBe(200);
  expect(JSON.parse(cancelled.body)).toMatchObject({ orderId, status: 'CANCELLED' });
}, 30_000);

test("another role's order is 404 to it", async () => {
  // Arrange
  const writer = await placeOrder(roleSession('OrderWriter', 's1'), `two-roles-${suffix}`);
  const { orderId } = JSON.parse(writer.body) as { orderId: string };

  // Act
  const peek = await call('GET', `/orders/${orderId}`, roleSession('ReportingJob', 's1'));

  // Assert
  expect(writer.status).toBe(201);
  expect(peek.status).toBe(404);
}, 30_000);
