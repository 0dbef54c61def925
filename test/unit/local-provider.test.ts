import * as http from 'node:http';
import {
  parseChaosPlan,
  servedApis,
  startProviderEmulator,
  type ProviderEmulator,
  type ProviderEmulatorOptions,
  type ProviderEndpoint,
} from '@exactly-once/tools/local-runtime/provider';
import { MAIL_AND_WAREHOUSE } from '../support/local-provider-apis';

/**
 * The local provider over loopback HTTP: Stripe-like key semantics, the
 * keyless mode, every chaos fault (fired and counted), and every rejection
 * (answered with a problem, nothing performed).
 */
const API_KEY = 'test-provider-key';
const MAIL = { template: 'order-confirmation', customerId: 'c-1', orderId: 'o-1', pointsEarned: 12 };
const PICK = { instruction: 'PICK', orderId: 'o-1', items: [{ sku: 'sku-1', quantity: 2 }] };

let provider: ProviderEmulator | undefined;

afterEach(async () => {
  await provider?.stop();
  provider = undefined;
});

async function start(options: Partial<ProviderEmulatorOptions> = {}): Promise<ProviderEmulator> {
  provider = await startProviderEmulator({ apiKey: API_KEY, apis: MAIL_AND_WAREHOUSE, ...options });
  return provider;
}

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

async function call(
  url: string,
  init: {
    method?: string;
    key?: string;
    auth?: string | null;
    body?: string;
    signal?: AbortSignal;
    traceparent?: string;
  } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (init.traceparent !== undefined) headers.traceparent = init.traceparent;
  if (init.auth !== null) headers.Authorization = init.auth ?? `Bearer ${API_KEY}`;
  if (init.key !== undefined) headers['Idempotency-Key'] = init.key;
  const response = await fetch(url, { method: init.method ?? 'POST', headers, body: init.body, signal: init.signal });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === '' ? {} : JSON.parse(text) };
}

function post(
  endpoint: ProviderEndpoint,
  payload: unknown,
  init: { key?: string; auth?: string | null; signal?: AbortSignal; traceparent?: string } = {},
): Promise<Answer> {
  return call(provider!.endpoints[endpoint], { ...init, body: JSON.stringify(payload) });
}

async function until(condition: () => boolean, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('idempotency keys', () => {
  test('the first request with a key is performed, logged and answered', async () => {
    // Arrange
    const p = await start({ now: () => Date.parse('2026-01-01T00:00:00.000Z') });

    // Act
    const answer = await post('warehouse', PICK, { key: 'fulfilment:e-1' });

    // Assert
    expect(answer.status).toBe(201);
    expect(answer.body).toEqual({ id: 'ins_000001', status: 'accepted', instruction: 'PICK' });
    expect(answer.headers.get('idempotent-replayed')).toBeNull();
    expect(p.log().performed).toEqual([
      {
        seq: 1,
        endpoint: 'warehouse',
        key: 'fulfilment:e-1',
        payload: PICK,
        performedAt: '2026-01-01T00:00:00.000Z',
        id: 'ins_000001',
        answer: 'sent',
        traceparent: null,
      },
    ]);
  });

  test("a performed effect keeps the request's traceparent header: the call's place in the order's trace", async () => {
    const p = await start();
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

    await post('mail', MAIL, { key: 'loyalty:e-1', traceparent });

    expect(p.log().performed.map((e) => e.traceparent)).toEqual([traceparent]);
  });

  test('a retry with the same key and payload gets the stored answer, replayed, and is performed once', async () => {
    // Arrange
    const p = await start();
    const first = await post('mail', MAIL, { key: 'loyalty:e-1' });
    const reordered = Object.fromEntries(Object.entries(MAIL).reverse()); // canonical JSON: the same payload

    // Act
    const retry = await post('mail', reordered, { key: 'loyalty:e-1' });

    // Assert
    expect(retry.status).toBe(first.status);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    const log = p.log();
    expect(log.performed).toHaveLength(1);
    expect(log.keys.mail['loyalty:e-1']).toMatchObject({ requests: 2, performed: 1, replayed: 1 });
    expect(log.counters.replayed).toBe(1);
  });

  test('the same key with another payload gets 422 and is not performed again', async () => {
    // Arrange
    const p = await start();
    await post('mail', MAIL, { key: 'loyalty:e-1' });

    // Act
    const answer = await post('mail', { ...MAIL, pointsEarned: 13 }, { key: 'loyalty:e-1' });

    // Assert
    expect(answer.status).toBe(422);
    expect(answer.headers.get('content-type')).toBe('application/problem+json');
    expect(answer.body).toMatchObject({ type: 'urn:problem-type:idempotency-key-reused', status: 422 });
    expect(p.log().performed).toHaveLength(1);
    expect(p.log().counters.payloadMismatch).toBe(1);
  });

  test('a request while the same key is still running gets 409; the first then answers', async () => {
    // Arrange
    const p = await start({ latencyMs: 300 });
    const first = post('warehouse', PICK, { key: 'fulfilment:e-1' });
    await until(() => p.log().performed.length === 1);

    // Act
    const second = await post('warehouse', PICK, { key: 'fulfilment:e-1' });

    // Assert
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({ type: 'urn:problem-type:request-in-progress', status: 409 });
    expect(second.headers.get('retry-after')).toBe('1');
    expect((await first).status).toBe(201);
    expect(p.log().performed).toHaveLength(1);
    expect(p.log().counters.inProgress).toBe(1);
  });

  test('a key is forgotten after its window: the same request is performed again', async () => {
    // Arrange
    let now = Date.parse('2026-01-01T00:00:00.000Z');
    const p = await start({ keyWindowMs: 1_000, now: () => now });
    await post('mail', MAIL, { key: 'loyalty:e-1' });
    now += 999;
    const inside = await post('mail', MAIL, { key: 'loyalty:e-1' });
    now += 1;

    // Act
    const after = await post('mail', MAIL, { key: 'loyalty:e-1' });

    // Assert
    expect(inside.headers.get('idempotent-replayed')).toBe('true');
    expect(after.status).toBe(202);
    expect(after.headers.get('idempotent-replayed')).toBeNull();
    expect(p.log().performed.map((e) => e.performedAt)).toEqual([
      '2026-01-01T00:00:00.000Z',
      '2026-01-01T00:00:01.000Z',
    ]);
    expect(p.log().counters.keysExpired).toBe(1);
  });

  test('keys are per endpoint: the same key on the other endpoint is a new request', async () => {
    // Arrange
    const p = await start();
    await post('mail', MAIL, { key: 'k-1' });

    // Act
    const answer = await post('warehouse', PICK, { key: 'k-1' });

    // Assert
    expect(answer.status).toBe(201);
    expect(p.log().performed.map((e) => e.endpoint)).toEqual(['mail', 'warehouse']);
  });

  test('a keyed endpoint performs every request without a key (as Stripe does), unless requireKey refuses it', async () => {
    // Arrange
    const lenient = await start();
    await post('mail', MAIL);
    await post('mail', MAIL);
    const lenientPerformed = lenient.log().performed.map((e) => e.key);
    await lenient.stop();
    const strict = await start({ requireKey: true });

    // Act
    const refused = await post('mail', MAIL);

    // Assert
    expect(lenientPerformed).toEqual([null, null]);
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toMatch(/Idempotency-Key header is required/);
    expect(strict.log().performed).toEqual([]);
  });
});

describe('keyless mode', () => {
  test('a keyless endpoint performs every call, the key only logged; the keyed one still dedupes', async () => {
    // Arrange
    const p = await start({ keyless: ['mail'] });

    // Act
    const sends = [];
    for (let i = 0; i < 3; i++) sends.push(await post('mail', MAIL, { key: 'loyalty:e-1' }));
    await post('warehouse', PICK, { key: 'fulfilment:e-1' });
    await post('warehouse', PICK, { key: 'fulfilment:e-1' });

    // Assert
    expect(sends.map((s) => s.status)).toEqual([202, 202, 202]);
    expect(sends.map((s) => s.headers.get('idempotent-replayed'))).toEqual([null, null, null]);
    const log = p.log();
    expect(log.performed.filter((e) => e.endpoint === 'mail' && e.key === 'loyalty:e-1')).toHaveLength(3);
    expect(log.keys.mail['loyalty:e-1']).toMatchObject({ requests: 3, performed: 3, replayed: 0 });
    expect(log.keys.warehouse['fulfilment:e-1']).toMatchObject({ requests: 2, performed: 1, replayed: 1 });
  });
});

describe('chaos', () => {
  test('applied then the answer dropped: the effect is in the log, the caller sees a socket error, the retry replays', async () => {
    // Arrange
    const p = await start({ chaos: { dropAnswer: { count: 1 } } });

    // Act
    const dropped = post('warehouse', PICK, { key: 'fulfilment:e-1' });

    // Assert
    await expect(dropped).rejects.toMatchObject({ message: 'fetch failed', cause: { code: 'UND_ERR_SOCKET' } });
    expect(p.log().performed).toMatchObject([{ key: 'fulfilment:e-1', answer: 'dropped' }]);
    expect(p.log().counters.chaos.answersDropped).toBe(1);
    const retry = await post('warehouse', PICK, { key: 'fulfilment:e-1' });
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(p.log().performed).toHaveLength(1);
  });

  test('a slow answer comes after the delay, and is counted', async () => {
    // Arrange
    const p = await start({ chaos: { slowAnswer: { count: 1, delayMs: 250 } } });
    const started = Date.now();

    // Act
    const answer = await post('mail', MAIL, { key: 'loyalty:e-1' });

    // Assert
    expect(answer.status).toBe(202);
    expect(Date.now() - started).toBeGreaterThanOrEqual(240);
    expect(p.log().counters.chaos.slowAnswers).toBe(1);
  });

  test('a slow answer past the caller deadline: the caller gives up, the effect stays performed (abandoned answer)', async () => {
    // Arrange
    const p = await start({ chaos: { slowAnswer: { count: 1, delayMs: 300 } } });

    // Act
    const call = post('mail', MAIL, { key: 'loyalty:e-1', signal: AbortSignal.timeout(50) });

    // Assert
    await expect(call).rejects.toThrow();
    await until(() => p.log().performed[0]?.answer === 'abandoned');
    expect(p.log().counters).toMatchObject({ performed: 1, answersAbandoned: 1, chaos: { slowAnswers: 1 } });
  });

  test('429 with Retry-After, not performed; the next request goes through', async () => {
    // Arrange
    const p = await start({ chaos: { rateLimit: { count: 1, retryAfterSeconds: 2 } } });

    // Act
    const limited = await post('mail', MAIL, { key: 'loyalty:e-1' });
    const next = await post('mail', MAIL, { key: 'loyalty:e-1' });

    // Assert
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('2');
    expect(limited.body).toMatchObject({ type: 'urn:problem-type:rate-limited', status: 429 });
    expect(next.status).toBe(202);
    expect(p.log().performed).toHaveLength(1);
    expect(p.log().counters.chaos.rateLimited).toBe(1);
    expect(p.log().keys.mail['loyalty:e-1']).toMatchObject({ requests: 2, chaosRefused: 1, performed: 1 });
  });

  test('a 5xx burst: the next N requests get 503, not performed', async () => {
    // Arrange
    const p = await start({ chaos: { serverErrorBurst: { requests: 3 } } });

    // Act
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await post('mail', MAIL, { key: 'loyalty:e-1' })).status);

    // Assert
    expect(statuses).toEqual([503, 503, 503, 202]);
    expect(p.log().performed).toHaveLength(1);
    expect(p.log().counters.chaos).toMatchObject({ burstsStarted: 1, burstUnavailable: 3 });
  });

  test('5xx bursts at a probability: the first starts with the next request, later ones by the seeded roll', async () => {
    // Arrange
    const p = await start({ chaos: { seed: 1, serverErrorBurst: { requests: 2, probability: 1 } } });

    // Act
    const first = (await post('mail', MAIL, { key: 'loyalty:e-1' })).status;
    const second = (await post('mail', MAIL, { key: 'loyalty:e-1' })).status;
    const third = (await post('mail', MAIL, { key: 'loyalty:e-1' })).status;

    // Assert
    expect([first, second, third]).toEqual([503, 503, 503]);
    expect(p.log().counters.chaos).toMatchObject({ burstsStarted: 2, burstUnavailable: 3 });
    expect(p.log().performed).toHaveLength(0);
  });

  test('an outage window answers 503 with Retry-After until it ends, nothing performed inside it', async () => {
    // Arrange
    let now = 2_000;
    const p = await start({ now: () => now, chaos: { outage: { from: 1_000, until: 5_000 } } });

    // Act
    const inside = await post('warehouse', PICK, { key: 'fulfilment:e-1' });
    now = 5_000;
    const after = await post('warehouse', PICK, { key: 'fulfilment:e-1' });

    // Assert
    expect(inside.status).toBe(503);
    expect(inside.headers.get('retry-after')).toBe('3');
    expect(after.status).toBe(201);
    expect(p.log().performed).toHaveLength(1);
    expect(p.log().counters.chaos.outageUnavailable).toBe(1);
  });

  test('an outage of forMs opens at the first call after the plan is set, however late that call comes, and ends forMs later', async () => {
    // Arrange: the first call comes a minute after the plan (a cold runtime); a clock-timed window would be over.
    let now = 60_000;
    const p = await start({ now: () => now, chaos: { outage: { forMs: 4_000 } } });

    // Act
    const first = await post('warehouse', PICK, { key: 'fulfilment:e-1' });
    now = 63_000;
    const inside = await post('mail', MAIL, { key: 'loyalty:e-1' });
    now = 64_000;
    const after = await post('warehouse', PICK, { key: 'fulfilment:e-1' });

    // Assert
    expect([first.status, inside.status, after.status]).toEqual([503, 503, 201]);
    expect(first.headers.get('retry-after')).toBe('4');
    expect(p.log().counters.chaos.outageUnavailable).toBe(2);
    expect(p.log().performed).toHaveLength(1);
  });

  test('an outage window in refused mode destroys the socket unanswered, nothing performed', async () => {
    // Arrange
    const p = await start({
      chaos: { outage: { from: '2000-01-01T00:00:00Z', until: '2100-01-01T00:00:00Z', mode: 'refused' } },
    });

    // Act
    const refused = post('warehouse', PICK, { key: 'fulfilment:e-1' });

    // Assert
    await expect(refused).rejects.toMatchObject({ message: 'fetch failed', cause: { code: 'UND_ERR_SOCKET' } });
    expect(p.log().performed).toEqual([]);
    expect(p.log().counters.chaos.outageRefused).toBe(1);
  });

  test('keys forgotten early (forgetKeys now): a redrive is performed again', async () => {
    // Arrange
    const p = await start();
    await post('mail', MAIL, { key: 'loyalty:e-1' });
    const forgotten = p.forgetKeys();

    // Act
    const redrive = await post('mail', MAIL, { key: 'loyalty:e-1' });

    // Assert
    expect(forgotten).toBe(1);
    expect(redrive.headers.get('idempotent-replayed')).toBeNull();
    expect(p.log().performed).toHaveLength(2);
    expect(p.log().counters.chaos.keysForgottenEarly).toBe(1);
  });

  test('keys forgotten early (forgetKeysOlderThanMs in the plan): older keys are performed again, younger replayed', async () => {
    // Arrange
    let now = 0;
    const p = await start({ now: () => now, chaos: { forgetKeysOlderThanMs: 500 } });
    await post('mail', MAIL, { key: 'old' });
    now = 400;
    await post('mail', MAIL, { key: 'young' });
    now = 500;

    // Act
    const old = await post('mail', MAIL, { key: 'old' });
    const young = await post('mail', MAIL, { key: 'young' });

    // Assert
    expect(old.headers.get('idempotent-replayed')).toBeNull();
    expect(young.headers.get('idempotent-replayed')).toBe('true');
    expect(p.log().performed.map((e) => e.key)).toEqual(['old', 'young', 'old']);
    expect(p.log().counters.chaos.keysForgottenEarly).toBe(1);
  });

  test('probabilities are seeded: the same plan and requests give the same faults', async () => {
    // Arrange
    const plan = { seed: 7, rateLimit: { probability: 0.5 } };
    const run = async () => {
      await start({ chaos: plan });
      const statuses = [];
      for (let i = 0; i < 20; i++) statuses.push((await post('mail', MAIL, { key: `loyalty:e-${i}` })).status);
      await provider!.stop();
      return statuses;
    };

    // Act
    const first = await run();
    const second = await run();

    // Assert
    expect(second).toEqual(first);
    expect(first).toContain(429);
    expect(first).toContain(202);
  });

  test('chaos limited to one endpoint leaves the other alone', async () => {
    // Arrange
    const p = await start({ chaos: { endpoints: ['warehouse'], serverErrorBurst: { requests: 5 } } });

    // Act
    const mail = await post('mail', MAIL, { key: 'loyalty:e-1' });
    const warehouse = await post('warehouse', PICK, { key: 'fulfilment:e-1' });

    // Assert
    expect([mail.status, warehouse.status]).toEqual([202, 503]);
    expect(p.log().performed.map((e) => e.endpoint)).toEqual(['mail']);
  });
});

describe('rejections: a problem body, nothing performed', () => {
  const cases: {
    name: string;
    status: number;
    title: string;
    request: (p: ProviderEmulator) => Promise<Answer>;
    header?: [string, RegExp];
  }[] = [
    {
      name: 'no API key',
      status: 401,
      title: 'Unauthorized',
      request: (p) => call(p.endpoints.mail, { auth: null, key: 'k', body: JSON.stringify(MAIL) }),
      header: ['www-authenticate', /^Bearer/],
    },
    {
      name: 'a wrong API key',
      status: 403,
      title: 'Forbidden',
      request: (p) => call(p.endpoints.mail, { auth: 'Bearer nope', key: 'k', body: JSON.stringify(MAIL) }),
    },
    {
      name: 'a body over 256 KiB',
      status: 413,
      title: 'Content Too Large',
      request: (p) => call(p.endpoints.mail, { key: 'k', body: JSON.stringify({ ...MAIL, pad: 'x'.repeat(300_000) }) }),
    },
    {
      name: 'a body that is not JSON',
      status: 400,
      title: 'Bad Request',
      request: (p) => call(p.endpoints.mail, { key: 'k', body: '{"template": ' }),
    },
    {
      name: 'a JSON body that is not an object',
      status: 400,
      title: 'Bad Request',
      request: (p) => call(p.endpoints.mail, { key: 'k', body: '[1, 2]' }),
    },
    {
      name: 'an unknown warehouse instruction',
      status: 400,
      title: 'Bad Request',
      request: (p) => call(p.endpoints.warehouse, { key: 'k', body: JSON.stringify({ ...PICK, instruction: 'DROP' }) }),
    },
    {
      name: 'a malformed Idempotency-Key',
      status: 400,
      title: 'Bad Request',
      request: (p) => call(p.endpoints.mail, { key: 'a,b', body: JSON.stringify(MAIL) }),
    },
    {
      name: 'an unknown route',
      status: 404,
      title: 'Not Found',
      request: (p) => call(`${p.url}/mail/unknown`, { key: 'k', body: JSON.stringify(MAIL) }),
    },
    {
      name: 'a wrong method',
      status: 405,
      title: 'Method Not Allowed',
      request: (p) => call(p.endpoints.mail, { method: 'GET' }),
      header: ['allow', /^POST$/],
    },
  ];

  test.each(cases)('$name: $status', async ({ status, title, request, header }) => {
    // Arrange
    const p = await start();
    const before = p.log();

    // Act
    const answer = await request(p);

    // Assert
    expect(answer.status).toBe(status);
    expect(answer.headers.get('content-type')).toBe('application/problem+json');
    expect(answer.body).toMatchObject({ status, title, type: expect.stringMatching(/^urn:problem-type:/) });
    expect(typeof answer.body.detail).toBe('string');
    if (header !== undefined) expect(answer.headers.get(header[0])).toMatch(header[1]);
    const after = p.log();
    expect(after.performed).toEqual(before.performed);
    expect(after.keys).toEqual(before.keys);
    expect(after.counters.performed).toBe(0);
    expect(after.counters.rejected).toEqual({ [status]: 1 });
  });

  test('a Host that is not loopback is refused (DNS rebinding), nothing performed', async () => {
    // Arrange
    const p = await start();

    // Act
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(
        p.endpoints.mail,
        {
          method: 'POST',
          headers: { Host: 'evil.example', Authorization: `Bearer ${API_KEY}`, 'Idempotency-Key': 'k' },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(MAIL));
    });

    // Assert
    expect(status).toBe(403);
    expect(p.log().performed).toEqual([]);
  });
});

describe('log, health and the chaos control', () => {
  test('GET /__log is the log() snapshot, GET /__counters its counters, and GET /__health answers ok', async () => {
    // Arrange
    const p = await start();
    await post('mail', MAIL, { key: 'loyalty:e-1' });

    // Act
    const log = await call(`${p.url}/__log`, { method: 'GET', auth: null });
    const health = await call(`${p.url}/__health`, { method: 'GET', auth: null });
    const counters = await call(`${p.url}/__counters`, { method: 'GET', auth: null });

    // Assert
    expect(log.status).toBe(200);
    expect(log.body).toEqual(p.log());
    expect(log.body).toMatchObject({ counters: { requests: 1, performed: 1 } });
    expect(health).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(counters).toMatchObject({ status: 200, body: p.log().counters });
  });

  test('PUT /__chaos needs the API key and replaces the plan, malformed faults left out', async () => {
    // Arrange
    const p = await start();
    const body = JSON.stringify({ serverErrorBurst: { requests: 1 }, rateLimit: { probability: 7 }, bogus: true });

    // Act
    const unauthorized = await call(`${p.url}/__chaos`, { method: 'PUT', auth: null, body });
    const set = await call(`${p.url}/__chaos`, { method: 'PUT', body });
    const burst = await post('mail', MAIL, { key: 'loyalty:e-1' });

    // Assert
    expect(unauthorized.status).toBe(401);
    expect(set.body).toEqual({ serverErrorBurst: { requests: 1 } });
    expect(burst.status).toBe(503);
    expect(p.log().chaos).toEqual({ serverErrorBurst: { requests: 1 } });
  });

  test('POST /__keys/forget needs the API key, forgets answered keys now, and the next request with one is performed again', async () => {
    // Arrange
    const p = await start();
    await post('mail', MAIL, { key: 'loyalty:e-1' });

    // Act
    const unauthorized = await call(`${p.url}/__keys/forget`, { method: 'POST', auth: null, body: '{}' });
    const malformed = await call(`${p.url}/__keys/forget`, { method: 'POST', body: '{"olderThanMs":-1}' });
    const forgotten = await call(`${p.url}/__keys/forget`, { method: 'POST', body: '{}' });
    const again = await post('mail', MAIL, { key: 'loyalty:e-1' });

    // Assert
    expect(unauthorized.status).toBe(401);
    expect(malformed.status).toBe(400);
    expect(forgotten).toMatchObject({ status: 200, body: { forgotten: 1 } });
    expect(again.status).toBe(202);
    expect(p.log().performed).toHaveLength(2);
    expect(p.log().counters.chaos.keysForgottenEarly).toBe(1);
  });

  test('POST /__keys/forget with takenSince forgets and counts only the keys taken since: an earlier run keeps its keys', async () => {
    // Arrange
    let now = Date.parse('2026-01-01T00:00:00.000Z');
    const p = await start({ now: () => now });
    await post('mail', MAIL, { key: 'loyalty:earlier-run' });
    now += 60_000;
    const runStart = now;
    await post('mail', MAIL, { key: 'loyalty:this-run' });

    // Act
    const forgotten = await call(`${p.url}/__keys/forget`, {
      method: 'POST',
      body: JSON.stringify({ takenSince: runStart }),
    });
    const earlier = await post('mail', MAIL, { key: 'loyalty:earlier-run' });
    const ours = await post('mail', MAIL, { key: 'loyalty:this-run' });

    // Assert
    expect(forgotten).toMatchObject({ status: 200, body: { forgotten: 1 } });
    expect(earlier.headers.get('idempotent-replayed')).toBe('true');
    expect(ours.headers.get('idempotent-replayed')).toBeNull();
    expect(p.log().counters.chaos.keysForgottenEarly).toBe(1);
  });

  test('the log keeps when each retry the key absorbed happened, one time per replay or 409', async () => {
    // Arrange
    const p = await start({ now: () => Date.parse('2026-01-01T00:00:05.000Z') });
    await post('mail', MAIL, { key: 'loyalty:e-1' });

    // Act
    await post('mail', MAIL, { key: 'loyalty:e-1' });
    await post('mail', MAIL, { key: 'loyalty:e-1' });

    // Assert
    expect(p.log().keys.mail['loyalty:e-1']).toMatchObject({
      replayed: 2,
      absorbedAt: ['2026-01-01T00:00:05.000Z', '2026-01-01T00:00:05.000Z'],
    });
  });

  test('parseChaosPlan keeps valid faults and drops the rest', () => {
    // Arrange
    const raw = {
      seed: 3,
      endpoints: ['mail', 42, 'sms'],
      dropAnswer: { probability: 0.1 },
      slowAnswer: { count: 2 }, // no delayMs: off
      outage: { from: '2026-01-01T00:00:10Z', until: '2026-01-01T00:00:00Z' }, // ends before it starts: off
      forgetKeysOlderThanMs: 60_000,
    };

    // Act
    const plan = parseChaosPlan(raw);

    // Assert
    expect(plan).toEqual({
      seed: 3,
      endpoints: ['mail', 'sms'],
      dropAnswer: { probability: 0.1 },
      forgetKeysOlderThanMs: 60_000,
    });
  });

  test.each([
    [
      { forMs: 10_000, mode: 'unavailable' },
      { forMs: 10_000, mode: 'unavailable' },
    ],
    [{ forMs: 0 }, undefined],
    [{ forMs: -5 }, undefined],
    [{ forMs: 1.5 }, undefined],
    [{ forMs: 10_000, from: 'yesterday' }, undefined],
  ])('parseChaosPlan reads the outage %j as %j', (outage, expected) => {
    expect(parseChaosPlan({ outage }).outage).toEqual(expected);
  });
});

describe('the APIs it serves come from the consumer list', () => {
  test('every provider the consumers name, in their order: as described, or with the defaults', () => {
    // Arrange
    const consumers = [{ providers: ['warehouse'] }, { providers: ['mail', 'audit-log'] }, {}];
    const described = {
      warehouse: { route: '/warehouse/instructions', idPrefix: 'ins' },
      mail: { route: '/mail/messages', status: 202, idPrefix: 'msg' },
    };

    // Act
    const apis = servedApis(consumers, described);

    // Assert
    expect(apis.map(({ name, route, status, idPrefix }) => ({ name, route, status, idPrefix }))).toEqual([
      { name: 'warehouse', route: '/warehouse/instructions', status: 201, idPrefix: 'ins' },
      { name: 'mail', route: '/mail/messages', status: 202, idPrefix: 'msg' },
      { name: 'audit-log', route: '/audit-log/requests', status: 201, idPrefix: 'req' },
    ]);
  });

  test('a provider only a new consumer names is served with keys like the others: one effect for a retried key', async () => {
    // Arrange
    const p = await start({ apis: servedApis([{ providers: ['audit-log'] }], {}) });
    const payload = { entityId: 'b-1', action: 'BOOKED' };

    // Act
    const first = await post('audit-log', payload, { key: 'audit:e-1' });
    const retry = await post('audit-log', payload, { key: 'audit:e-1' });

    // Assert
    expect(p.endpoints).toEqual({ 'audit-log': `${p.url}/audit-log/requests` });
    expect(first).toMatchObject({ status: 201, body: { id: 'req_000001', status: 'accepted' } });
    expect(retry.body).toEqual(first.body);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(p.log().performed).toHaveLength(1);
  });

  test('a description of a provider no consumer calls is refused, naming it', () => {
    // Act
    const serving = () => servedApis([{ providers: ['mail'] }], { mail: {}, warehose: { status: 201 } });

    // Assert
    expect(serving).toThrow('localProviders describes warehose, which no consumer calls (their providers: mail)');
  });

  test('keyless names an API it does not serve: it refuses to start, naming the ones it serves', async () => {
    // Act
    const starting = startProviderEmulator({ apis: MAIL_AND_WAREHOUSE, keyless: ['sms'] });

    // Assert
    await expect(starting).rejects.toThrow('keyless: no provider API named "sms" (served: mail, warehouse)');
  });
});
