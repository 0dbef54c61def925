import { signedFetch } from '../../tools/local-runtime/api/sign';
import type { LocalRuntime } from '../../tools/local-runtime/runtime';
import { eventually, isAlive, startSynthesizedStack } from './fixtures';

/**
 * The real stack, as `npm start` runs it: `cdk synth` with bundling (into a
 * folder of its own), then the runtime on the synthesized template.
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

const order = (customerId: string, sku: string) =>
  JSON.stringify({ customerId, items: [{ sku, quantity: 3, unitPriceCents: 1250 }] });

test('a SigV4-signed POST /orders is placed (201), an identical retry is a replay, and both consumers apply their effects', async () => {
  const suffix = Date.now().toString(36);
  const [customerId, sku] = [`cust-${suffix}`, `sku-${suffix}`];
  const request = {
    method: 'POST',
    body: order(customerId, sku),
    headers: { 'Idempotency-Key': `"e2e-${suffix}"` },
    accessKeyId: 'AKIAE2E',
  };

  const first = await signedFetch(`${base}/orders`, request);
  const firstBody = await first.text();
  const second = await signedFetch(`${base}/orders`, request);

  expect(first.status).toBe(201);
  expect(first.headers.get('idempotent-replayed')).toBeNull();
  expect(second.status).toBe(201);
  expect(second.headers.get('idempotent-replayed')).toBe('true');
  expect(await second.text()).toBe(firstBody);
  const placed = JSON.parse(firstBody) as { orderId: string; totalCents: number };
  expect(first.headers.get('location')).toBe(`/orders/${placed.orderId}`);

  const get = async (p: string) => {
    const response = await signedFetch(`${base}${p}`, { method: 'GET', accessKeyId: 'AKIAE2E' });
    return response.status === 200 ? ((await response.json()) as Record<string, unknown>) : undefined;
  };
  // Generous bounds: the relay and both consumers may all cold-start on a busy machine first.
  const customer = await eventually(() => get(`/customers/${customerId}`), 90_000, 'loyalty points');
  const inventory = await eventually(() => get(`/inventory/${sku}`), 90_000, 'the stock reservation');
  expect(customer).toMatchObject({ customerId, points: Math.floor(placed.totalCents / 100) });
  expect(inventory).toMatchObject({ sku, reserved: 3 });
}, 240_000);

test('stop() leaves no emulator or function process behind', async () => {
  const pids = runtime.pids();
  expect(pids.length).toBeGreaterThanOrEqual(3);

  await runtime.stop();

  await eventually(() => (pids.filter(isAlive).length === 0 ? true : undefined), 30_000, 'every process to exit');
});
