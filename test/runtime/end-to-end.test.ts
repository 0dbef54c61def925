import { randomBytes } from 'node:crypto';
import type { SpanRecord } from '@exactly-once/runtime/trace/spans';
import { signedFetch, type SignedRequestOptions } from '@exactly-once/tools/local-runtime/api/sign';
import type { ProviderLog } from '@exactly-once/tools/local-runtime/provider';
import type { LocalRuntime } from '@exactly-once/tools/local-runtime/runtime';
import type { PlannedRequest } from '@exactly-once/tools/proof-kit/plan';
import { applicationDomain, oneCreate, userCaller } from './application-domain';
import { eventually, isAlive, startSynthesizedStack } from './fixtures';

/**
 * The application's stack (lib/app-stack.ts), as `npm start` runs it: `cdk synth` with bundling, then
 * the runtime on the synthesized template. One create of the application's domain, built by its proof
 * plug-in as the proof kit builds it, is placed once for its key and traced through every hop, from
 * the API call to the provider calls of the consumers that take its event. Whatever the domain: a fork
 * keeps these.
 */
const { consumers, proof } = applicationDomain();
const ACCESS_KEY = 'AKIAE2E';
let runtime: LocalRuntime;
let base: string;

beforeAll(async () => {
  runtime = await startSynthesizedStack();
  base = runtime.outputs.apiUrl!;
}, 180_000);

afterAll(async () => {
  await runtime?.stop();
});

/** Sends a planned request as its caller (an IAM user here), with extra headers. */
const send = (request: PlannedRequest, headers: Record<string, string> = {}) =>
  signedFetch(`${base}${request.path}`, {
    method: request.method,
    body: request.body === undefined ? undefined : JSON.stringify(request.body),
    headers: { 'Idempotency-Key': `"${request.idempotencyKey}"`, ...headers },
    accessKeyId: ACCESS_KEY,
  } satisfies SignedRequestOptions);

test('a create of the domain is placed (201) as the entity its caller and key make, and an identical retry is its replay', async () => {
  // Arrange
  const create = oneCreate(proof, userCaller(ACCESS_KEY), `e2e${Date.now().toString(36)}`);

  // Act
  const first = await send(create);
  const firstBody = await first.text();
  const second = await send(create);

  // Assert
  expect(first.status).toBe(201);
  expect(first.headers.get('idempotent-replayed')).toBeNull();
  expect(second.status).toBe(201);
  expect(second.headers.get('idempotent-replayed')).toBe('true');
  expect(await second.text()).toBe(firstBody);
  expect(proof.idOf(JSON.parse(firstBody) as Record<string, unknown>)).toBe(
    proof.entityIdOf(userCaller(ACCESS_KEY), create.idempotencyKey!),
  );
}, 60_000);

test("one create's trace, from the API call to the provider calls: one trace id, every hop a child of the one before", async () => {
  // Arrange
  const create = oneCreate(proof, userCaller(ACCESS_KEY), `trace${Date.now().toString(36)}`);
  const traceId = randomBytes(16).toString('hex');
  const callerSpan = randomBytes(8).toString('hex');

  // Act
  const response = await send(create, { traceparent: `00-${traceId}-${callerSpan}-01` });
  expect(response.status).toBe(201);
  const entityId = proof.idOf((await response.json()) as Record<string, unknown>);
  const eventId = proof.createdEventIdOf(entityId);
  // Each consumer that takes the created event applies it, and calls each provider it names.
  const spans = await eventually(
    async () => {
      const { spans: all } = (await (await fetch(`${base}/__local/spans`)).json()) as { spans: SpanRecord[] };
      const trace = all.filter((s) => s.traceId === traceId);
      const type = trace.find((s) => s.hop === 'relay')?.attributes?.type;
      if (type === undefined) return undefined;
      const taking = consumers.filter((c) => c.eventTypes.includes(type));
      const consumerSpan = (name: string) => trace.find((s) => s.hop === 'consumer' && s.attributes?.consumer === name);
      // A consumer's span is written when its record is done, after its provider calls'.
      const done = taking.every((c) => {
        const span = consumerSpan(c.name);
        const calls = trace.filter((s) => s.hop === 'provider-call' && s.parentId === span?.spanId);
        return span !== undefined && calls.length >= (c.providers ?? []).length;
      });
      return done ? { trace, taking } : undefined;
    },
    120_000,
    'the spans of every consumer taking the event, and of their provider calls',
  );
  const calls = await eventually(
    async () => {
      const log = (await (await fetch(`${runtime.outputs.stackOutputs.LocalProviderUrl}/__log`)).json()) as ProviderLog;
      const mine = log.performed.filter((e) => e.key?.endsWith(`:${eventId}`));
      const owed = spans.taking.reduce((sum, c) => sum + (c.providers ?? []).length, 0);
      return mine.length >= owed ? mine : undefined;
    },
    30_000,
    'the provider calls',
  );

  // Assert: the event the relay carried is the create's, and every hop's parent is the hop before it.
  const { trace, taking } = spans;
  expect(taking.length).toBeGreaterThan(0);
  expect(trace.filter((s) => s.hop === 'relay').map((s) => s.attributes?.eventId)).toContain(eventId);
  const owesCalls = taking.some((c) => (c.providers ?? []).length > 0);
  const hops = ['api', 'consumer', 'outbox-write', 'queue-wait', 'relay', ...(owesCalls ? ['provider-call'] : [])];
  expect([...new Set(trace.map((s) => s.hop))].sort()).toEqual(hops.sort());
  const byId = new Map(trace.map((s) => [s.spanId, s]));
  const parentHop = (s: SpanRecord) => (s.parentId === callerSpan ? 'caller' : byId.get(s.parentId!)?.hop);
  const chain: Record<string, string> = {
    api: 'caller',
    'outbox-write': 'api',
    relay: 'outbox-write',
    'queue-wait': 'relay',
    consumer: 'queue-wait',
    'provider-call': 'consumer',
  };
  for (const span of trace) expect([span.hop, parentHop(span)]).toEqual([span.hop, chain[span.hop]]);
  // Each provider request carried the trace, under the span of the call that made it.
  const providerCallIds = trace.filter((s) => s.hop === 'provider-call').map((s) => s.spanId);
  for (const call of calls) {
    expect(call.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    expect(providerCallIds).toContain(call.traceparent!.split('-')[2]);
  }
}, 240_000);

test('stop() leaves no emulator or function process behind', async () => {
  // Arrange
  const pids = runtime.pids();
  expect(pids.length).toBeGreaterThanOrEqual(3);

  // Act
  await runtime.stop();

  // Assert
  await eventually(() => (pids.filter(isAlive).length === 0 ? true : undefined), 30_000, 'every process to exit');
});
