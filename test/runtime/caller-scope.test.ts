import {
  localRoleSessionToken,
  signedFetch,
  type SignedRequestOptions,
} from '@exactly-once/tools/local-runtime/api/sign';
import type { LocalRuntime } from '@exactly-once/tools/local-runtime/runtime';
import { startSynthesizedStack } from './fixtures';

/**
 * The caller is the principal, not the session, through the real stack as
 * `npm start` runs it: a client whose role credentials rotate between a
 * request and its retry (new session name, new access key) stays in its key
 * space, so its retry is a replay and its order stays its own.
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

/** Temporary credentials of one session of a role, as STS would hand them out (each session its own key). */
function roleSession(role: string, session: string): Pick<SignedRequestOptions, 'accessKeyId' | 'sessionToken'> {
  return {
    accessKeyId: `ASIA${session.toUpperCase().replace(/[^A-Z0-9]/g, '')}`,
    sessionToken: localRoleSessionToken(role, session),
  };
}

async function call(
  method: string,
  p: string,
  credentials: Pick<SignedRequestOptions, 'accessKeyId' | 'sessionToken'>,
  extra: Partial<SignedRequestOptions> = {},
) {
  const response = await signedFetch(`${base}${p}`, { method, ...credentials, ...extra });
  return { status: response.status, headers: response.headers, body: await response.text() };
}

const suffix = Date.now().toString(36);
const order = JSON.stringify({
  customerId: `cust-${suffix}`,
  items: [{ sku: `sku-${suffix}`, quantity: 1, unitPriceCents: 500 }],
});
const placeOrder = (credentials: Pick<SignedRequestOptions, 'accessKeyId' | 'sessionToken'>, key: string) =>
  call('POST', '/orders', credentials, { body: order, headers: { 'Idempotency-Key': `"${key}"` } });

test('same role, two sessions, one Idempotency-Key: one order, the second answer is its replay', async () => {
  const key = `rotating-${suffix}`;

  const first = await placeOrder(roleSession('OrderWriter', 'ecs-task-a'), key);
  const retryAfterRotation = await placeOrder(roleSession('OrderWriter', 'ecs-task-b'), key);

  expect(first.status).toBe(201);
  expect(first.headers.get('idempotent-replayed')).toBeNull();
  expect(retryAfterRotation.status).toBe(201);
  expect(retryAfterRotation.headers.get('idempotent-replayed')).toBe('true');
  expect(retryAfterRotation.body).toBe(first.body);
}, 30_000);

test('an order placed by one session is readable and cancellable from another session of the role', async () => {
  const placed = await placeOrder(roleSession('OrderWriter', 'lambda-1'), `read-${suffix}`);
  const { orderId } = JSON.parse(placed.body) as { orderId: string };

  const read = await call('GET', `/orders/${orderId}`, roleSession('OrderWriter', 'lambda-2'));
  const cancelled = await call('POST', `/orders/${orderId}/cancel`, roleSession('OrderWriter', 'cli-session'));

  expect(placed.status).toBe(201);
  expect(read.status).toBe(200);
  expect(JSON.parse(read.body)).toEqual(JSON.parse(placed.body));
  expect(cancelled.status).toBe(200);
  expect(JSON.parse(cancelled.body)).toMatchObject({ orderId, status: 'CANCELLED' });
}, 30_000);

test('another role is another caller: the same key makes its own order, and the first order is 404 to it', async () => {
  const key = `two-roles-${suffix}`;
  const writer = await placeOrder(roleSession('OrderWriter', 's1'), key);
  const { orderId } = JSON.parse(writer.body) as { orderId: string };

  const other = await placeOrder(roleSession('ReportingJob', 's1'), key);
  const peek = await call('GET', `/orders/${orderId}`, roleSession('ReportingJob', 's1'));

  expect(other.status).toBe(201);
  expect(other.headers.get('idempotent-replayed')).toBeNull();
  expect(JSON.parse(other.body).orderId).not.toBe(orderId);
  expect(peek.status).toBe(404);
}, 30_000);

test('a role session token that names no session is no caller: 403 problem, nothing placed', async () => {
  const response = await placeOrder(
    { accessKeyId: 'ASIANOSESSION', sessionToken: 'local-role:OrderWriter' },
    `no-session-${suffix}`,
  );

  expect(response.status).toBe(403);
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  expect(JSON.parse(response.body)).toMatchObject({ status: 403, title: 'Forbidden' });
}, 30_000);
