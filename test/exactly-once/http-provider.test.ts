import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpProvider, ProviderUnavailable, type HttpProviderOptions } from '@exactly-once/runtime/aws/http-provider';
import { PermanentError, RetryLater } from '@exactly-once/runtime/errors';
import { DeadlineExceeded } from '@exactly-once/runtime/consumer/record-work';

/**
 * The HTTP provider adapter against a local `node:http` server on 127.0.0.1
 * (no network): what goes over the wire (the idempotency key, the API key,
 * the JSON body) and how each answer is classified: done, transient (with the
 * backoff hint where there is one) or permanent (with its cause).
 */

interface Seen {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingMessage['headers'];
  body: string;
}
type Answer = (request: IncomingMessage, response: ServerResponse) => void;

const API_KEY = 'sk_test_not-a-real-key';
const KEY = 'fulfilment:ord-1.placed';
const PAYLOAD = { orderId: 'ord-1', items: [{ sku: 'SKU-A', quantity: 2 }] };

let server: Server;
let endpoint: string;
let answer: Answer;
let seen: Seen[];

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      seen.push({
        method: request.method,
        url: request.url,
        headers: request.headers,
        body: Buffer.concat(chunks).toString(),
      });
      // No kept-alive sockets between tests: afterEach closes every connection.
      response.setHeader('Connection', 'close');
      answer(request, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

beforeEach(() => {
  seen = [];
  answer = status(200);
});

// Hung answers must not outlive a test; the pause lets the client see its sockets closed before the next test.
afterEach(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => setTimeout(resolve, 20));
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

// ---------------------------------------------------------------- fixtures

function status(code: number, headers: Record<string, string> = {}, body = ''): Answer {
  return (_request, response) => {
    response.writeHead(code, headers);
    response.end(body);
  };
}

function provider(options: Partial<HttpProviderOptions> = {}): HttpProvider {
  return new HttpProvider({ name: 'warehouse', endpoint, path: 'instructions', apiKey: () => API_KEY, ...options });
}

/** The call's rejection (or `undefined` if it resolved), to assert on after the act. */
const outcomeOf = (call: Promise<void>): Promise<unknown> =>
  call.then(
    () => undefined,
    (error: unknown) => error,
  );

// ---------------------------------------------------------------- what is sent

describe('the request', () => {
  test('POST to endpoint/path, with the idempotency key, the bearer API key and the JSON payload', async () => {
    const warehouse = provider();

    await warehouse.send(KEY, PAYLOAD);

    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/v1/instructions' });
    expect(seen[0].headers).toMatchObject({
      'idempotency-key': KEY,
      authorization: `Bearer ${API_KEY}`,
      'content-type': 'application/json',
    });
    expect(JSON.parse(seen[0].body)).toEqual(PAYLOAD);
  });

  test('another API key header, the key from a promise, no path: POST to the endpoint itself', async () => {
    const mail = provider({ path: undefined, apiKey: Promise.resolve('k-2'), apiKeyHeader: { name: 'X-Api-Key' } });

    await mail.send('loyalty:ord-2.placed', { to: 'cust-ord-2' });

    expect(seen[0].url).toBe('/v1');
    expect(seen[0].headers['x-api-key']).toBe('k-2');
    expect(seen[0].headers.authorization).toBeUndefined();
    expect(seen[0].headers['idempotency-key']).toBe('loyalty:ord-2.placed');
  });

  test('a retry after a failure carries the same key and the same body', async () => {
    const warehouse = provider();
    const answers = [status(503), status(200)];
    answer = (request, response) => answers.shift()!(request, response);

    const first = await outcomeOf(warehouse.send(KEY, PAYLOAD));
    const second = await outcomeOf(warehouse.send(KEY, PAYLOAD));

    expect(first).toBeInstanceOf(ProviderUnavailable);
    expect(second).toBeUndefined();
    expect(seen.map((s) => s.headers['idempotency-key'])).toEqual([KEY, KEY]);
    expect(seen[1].body).toBe(seen[0].body);
  });
});

// ---------------------------------------------------------------- answers

describe('the answer, classified', () => {
  test.each([200, 201, 202, 204])('%i: done', async (code) => {
    answer = status(code, {}, code === 204 ? '' : '{"id":"instr-1"}');

    const outcome = await outcomeOf(provider().send(KEY, PAYLOAD));

    expect(outcome).toBeUndefined();
  });

  test('409 (the provider still runs that key): transient, RetryLater with the short default hint', async () => {
    answer = status(409, {}, '{"error":"request in progress"}');

    const outcome = await outcomeOf(provider().send(KEY, PAYLOAD));

    expect(outcome).toBeInstanceOf(RetryLater);
    expect((outcome as RetryLater).retryAfterSeconds).toBe(5);
    expect((outcome as RetryLater).message).toMatch(/409/);
  });

  test('409 with a Retry-After: that hint instead of the default', async () => {
    answer = status(409, { 'Retry-After': '2' });

    const outcome = await outcomeOf(provider({ inProgressRetrySeconds: 7 }).send(KEY, PAYLOAD));

    expect((outcome as RetryLater).retryAfterSeconds).toBe(2);
  });

  test('422 (same key, another payload): permanent ProviderRejected naming the status and an excerpt, no secrets', async () => {
    const echoed = `{"error":"idempotency key reused with a different payload","auth":"Bearer ${API_KEY}"}`;
    answer = status(422, { 'Content-Type': 'application/json', 'X-Request-Id': 'req-secret-header' }, echoed);

    const outcome = await outcomeOf(provider().send(KEY, PAYLOAD));

    expect(outcome).toBeInstanceOf(PermanentError);
    expect((outcome as PermanentError).permanentCause).toBe('ProviderRejected');
    const { message } = outcome as PermanentError;
    expect(message).toMatch(/422/);
    expect(message).toContain(KEY);
    expect(message).toContain('idempotency key reused with a different payload');
    expect(message).not.toContain(API_KEY);
    expect(message).not.toContain('req-secret-header');
  });

  test.each([
    [429, '30', 30],
    [503, '120', 120],
    [429, 'Wed, 02 Dec 2026 01:02:00 GMT', 120], // an HTTP date, 2 min after the clock below
    [503, 'Wed, 02 Dec 2026 00:59:00 GMT', 0], // a date already past: retry at once (the consumer's own backoff)
  ])('%i with Retry-After "%s": transient, RetryLater of %i s', async (code, retryAfter, seconds) => {
    answer = status(code, { 'Retry-After': retryAfter });
    const clock = () => new Date('2026-12-02T01:00:00Z');

    const outcome = await outcomeOf(provider({ now: clock }).send(KEY, PAYLOAD));

    expect(outcome).toBeInstanceOf(RetryLater);
    expect((outcome as RetryLater).retryAfterSeconds).toBe(seconds);
  });

  test.each([
    [429, undefined],
    [503, undefined],
    [503, 'soon'],
  ])(
    '%i with Retry-After %s: transient with no hint (ProviderUnavailable, the consumer backs off alone)',
    async (code, retryAfter) => {
      answer = status(code, retryAfter === undefined ? {} : { 'Retry-After': retryAfter });

      const outcome = await outcomeOf(provider().send(KEY, PAYLOAD));

      expect(outcome).toBeInstanceOf(ProviderUnavailable);
      expect(outcome).not.toBeInstanceOf(RetryLater);
      expect((outcome as Error).message).toMatch(new RegExp(`${code}`));
    },
  );

  test.each([400, 401, 403, 404, 410, 413])('%i: permanent ProviderRejected', async (code) => {
    answer = status(code, {}, 'no');

    const outcome = await outcomeOf(provider().send(KEY, PAYLOAD));

    expect(outcome).toBeInstanceOf(PermanentError);
    expect((outcome as PermanentError).permanentCause).toBe('ProviderRejected');
    expect((outcome as PermanentError).message).toMatch(new RegExp(`${code}`));
  });

  test('401 with a key refresher: transient (the key may have been rotated), and the key is read again next time', async () => {
    answer = status(401, {}, 'bad key');
    const refreshApiKey = jest.fn();

    const outcome = await outcomeOf(provider({ refreshApiKey }).send(KEY, PAYLOAD));

    expect(outcome).toBeInstanceOf(RetryLater);
    expect(outcome).not.toBeInstanceOf(PermanentError);
    expect(refreshApiKey).toHaveBeenCalledTimes(1);
  });

  test('a redirect is not followed (it could turn the POST into a GET, or carry the key elsewhere): permanent', async () => {
    answer = status(307, { Location: 'http://127.0.0.1:1/elsewhere' });

    const outcome = await outcomeOf(provider().send(KEY, PAYLOAD));

    expect((outcome as PermanentError).permanentCause).toBe('ProviderRejected');
    expect(seen).toHaveLength(1);
  });

  test.each([500, 502, 504, 408])('%i: transient ProviderUnavailable', async (code) => {
    answer = status(code, {}, 'upstream trouble');

    const outcome = await outcomeOf(provider().send(KEY, PAYLOAD));

    expect(outcome).toBeInstanceOf(ProviderUnavailable);
    expect((outcome as ProviderUnavailable).outcomeUnknown).toBe(code !== 408); // a 5xx may have been applied
  });
});

// ---------------------------------------------------------------- no answer

describe('no answer', () => {
  const neverAnswers: Answer = () => undefined;

  test('a server that never answers is cut at the per-call timeout: transient, outcome unknown', async () => {
    answer = neverAnswers;
    const started = Date.now();

    const outcome = await outcomeOf(provider({ timeoutMs: 200 }).send(KEY, PAYLOAD));

    expect(outcome).toBeInstanceOf(ProviderUnavailable);
    expect((outcome as ProviderUnavailable).outcomeUnknown).toBe(true);
    expect((outcome as Error).message).toMatch(/no answer within 200 ms/);
    expect(Date.now() - started).toBeLessThan(5_000);
  }, 5_000);

  test("a server that never answers is cut at the record's deadline: the deadline's own DeadlineExceeded", async () => {
    answer = neverAnswers;
    const record = new AbortController();
    const deadline = new DeadlineExceeded(Date.now() + 100);
    setTimeout(() => record.abort(deadline), 100);

    const outcome = await outcomeOf(provider({ timeoutMs: 30_000 }).send(KEY, PAYLOAD, { signal: record.signal }));

    expect(outcome).toBe(deadline);
  });

  test('a record already past its deadline sends nothing', async () => {
    const record = new AbortController();
    const deadline = new DeadlineExceeded(Date.now());
    record.abort(deadline);

    const outcome = await outcomeOf(provider().send(KEY, PAYLOAD, { signal: record.signal }));

    expect(outcome).toBe(deadline);
    expect(seen).toEqual([]);
  });

  test('the server destroys the socket (connection reset): transient, outcome unknown', async () => {
    answer = (request) => request.socket.destroy();

    const outcome = await outcomeOf(provider().send(KEY, PAYLOAD));

    expect(outcome).toBeInstanceOf(ProviderUnavailable);
    expect((outcome as ProviderUnavailable).outcomeUnknown).toBe(true);
    expect(seen).toHaveLength(1);
  });

  test('nothing listens (connection refused): transient, and the provider cannot have applied it', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));

    const outcome = await outcomeOf(provider({ endpoint: `http://127.0.0.1:${port}` }).send(KEY, PAYLOAD));

    expect(outcome).toBeInstanceOf(ProviderUnavailable);
    expect((outcome as ProviderUnavailable).outcomeUnknown).toBe(false);
    expect((outcome as Error).message).toMatch(/ECONNREFUSED/);
  });
});

// ---------------------------------------------------------------- bounded read

describe('the response body is read only up to its bound', () => {
  /** An answer whose body never ends; `closed` resolves when the client has hung up. */
  function endlessBody(code: number) {
    let hungUp: () => void = () => undefined;
    const closed = new Promise<void>((resolve) => (hungUp = resolve));
    const answer: Answer = (_request, response) => {
      response.writeHead(code, { 'Content-Type': 'text/plain' });
      const chunk = Buffer.alloc(16 * 1024, 'x');
      const pump = () => {
        while (!response.destroyed && response.write(chunk));
      };
      response.on('drain', pump);
      response.on('close', hungUp);
      pump();
    };
    return { answer, closed };
  }

  test('a 422 with an endless body: classified from its first bytes, the rest never read, the connection closed', async () => {
    const endless = endlessBody(422);
    answer = endless.answer;

    const outcome = await outcomeOf(provider({ maxResponseBytes: 1024 }).send(KEY, PAYLOAD));

    expect((outcome as PermanentError).permanentCause).toBe('ProviderRejected');
    expect((outcome as Error).message).toMatch(/422/);
    expect((outcome as Error).message).toContain('x'.repeat(200) + '…');
    expect((outcome as Error).message.length).toBeLessThan(400);
    await expect(endless.closed).resolves.toBeUndefined();
  }, 10_000);

  test('a 200 with an endless body: done without reading it', async () => {
    const endless = endlessBody(200);
    answer = endless.answer;

    const outcome = await outcomeOf(provider().send(KEY, PAYLOAD));

    expect(outcome).toBeUndefined();
    await expect(endless.closed).resolves.toBeUndefined();
  }, 10_000);
});
