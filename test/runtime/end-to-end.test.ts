import { randomBytes } from 'node:crypto';
import type { SpanRecord } from '@exactly-once/runtime/trace/spans';
import { signedFetch } from '@exactly-once/tools/local-runtime/api/sign';
import type { ProviderLog } from '@exactly-once/tools/local-runtime/provider';
import type { LocalRuntime } from '@exactly-once/tools/local-runtime/runtime';
import { eventually, isAlive, startSynthesizedStack } from './fixtures';

/**
 * The real stack, as `npm start` runs it: `cdk synth` with bundling (into a
 * folder of its own), then the runtime on the synthesized template.
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

test("one order's trace, from the API call to both provider calls: one trace id, every hop a child of the one before", async () => {
  const suffix = Date.now().toString(36);
  const traceId = randomBytes(16).toString('hex');
  const callerSpan = randomBytes(8).toString('hex');
  const response = await signedFetch(`${base}/orders`, {
    method: 'POST',
    body: order(`cust-t-${suffix}`, `sku-t-${suffix}`),
    headers: { 'Idempotency-Key': `"trace-${suffix}"`, traceparent: `00-${traceId}-${callerSpan}-01` },
    accessKeyId: 'AKIAE2E',
  });
  expect(response.status).toBe(201);
  const { orderId } = (await response.json()) as { orderId: string };

  // Both providers performed the order's effects, each request carrying the order's trace.
  const providerUrl = runtime.outputs.stackOutputs.LocalProviderUrl;
  const calls = await eventually(
    async () => {
      const log = (await (await fetch(`${providerUrl}/__log`)).json()) as ProviderLog;
      const mine = log.performed.filter((e) => e.key?.endsWith(`:${orderId}.placed`));
      return mine.length >= 2 ? mine : undefined;
    },
    90_000,
    'both provider calls',
  );
  for (const call of calls) expect(call.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));

  // The runtime recorded every hop; each span's parent is the hop before it, the first one the caller's.
  const spans = await eventually(
    async () => {
      const { spans: all } = (await (await fetch(`${base}/__local/spans`)).json()) as { spans: SpanRecord[] };
      const trace = all.filter((s) => s.traceId === traceId);
      // A consumer's span is written when its record is done, after its provider call's.
      const done = ['provider-call', 'consumer'].every((hop) => trace.filter((s) => s.hop === hop).length >= 2);
      return done ? trace : undefined;
    },
    30_000,
    'the spans of both consumers and their provider calls',
  );
  const hops = new Set(spans.map((s) => s.hop));
  expect([...hops].sort()).toEqual(['api', 'consumer', 'outbox-write', 'provider-call', 'queue-wait', 'relay']);
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const parentHop = (s: SpanRecord) => (s.parentId === callerSpan ? 'caller' : byId.get(s.parentId!)?.hop);
  const chain: Record<string, string> = {
    api: 'caller',
    'outbox-write': 'api',
    relay: 'outbox-write',
    'queue-wait': 'relay',
    consumer: 'queue-wait',
    'provider-call': 'consumer',
  };
  for (const span of spans) expect([span.hop, parentHop(span)]).toEqual([span.hop, chain[span.hop]]);
  // The provider saw the provider-call spans themselves.
  const providerCallIds = spans.filter((s) => s.hop === 'provider-call').map((s) => s.spanId);
  for (const call of calls) expect(providerCallIds).toContain(call.traceparent!.split('-')[2]);
}, 240_000);

test('stop() leaves no emulator or function process behind', async () => {
  const pids = runtime.pids();
  expect(pids.length).toBeGreaterThanOrEqual(3);

  await runtime.stop();

  await eventually(() => (pids.filter(isAlive).length === 0 ? true : undefined), 30_000, 'every process to exit');
});
