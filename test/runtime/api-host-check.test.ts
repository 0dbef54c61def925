import * as http from 'node:http';
import { ApiServer } from '@exactly-once/tools/local-runtime/api/server';
import type { FunctionHost } from '@exactly-once/tools/local-runtime/host/function-host';

/**
 * DNS rebinding: a web page whose domain is re-pointed at 127.0.0.1 reaches
 * the local API from the user's browser, with its own domain in Host. The
 * local API answers only loopback Host names.
 */
const invocations: unknown[] = [];
const host = {
  invoke: async (event: unknown) => {
    invocations.push(event);
    return { ok: true, payload: { statusCode: 200, body: '{"ok":true}' } };
  },
} as unknown as FunctionHost;

let server: ApiServer;
let port: number;

beforeAll(async () => {
  server = new ApiServer({
    api: {
      logicalId: 'Api',
      name: 'Api',
      stageName: 'prod',
      binaryMediaTypes: [],
      gatewayResponses: {},
      unsupportedMethods: [],
      routes: [
        {
          methodLogicalId: 'Get',
          httpMethod: 'GET',
          resourcePath: '/things',
          resourceId: 'Things',
          authorizationType: 'NONE',
          functionLogicalId: 'Fn',
          requiredParameters: [],
          validatesParameters: false,
          integrationTimeoutMs: 5_000,
        },
      ],
    },
    apiId: 'local',
    hostOf: () => host,
    port: 0,
    log: () => undefined,
    localRoutes: { '/__local/stats': () => ({ calls: 1 }) },
  });
  await server.start();
  port = Number(new URL(server.url).port);
});

afterAll(() => server.stop());

function get(path: string, hostHeader: string | undefined): Promise<{ status: number; type?: string; body: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = hostHeader === undefined ? {} : { Host: hostHeader };
    const req = http.request(
      { host: '127.0.0.1', port, path, method: 'GET', headers, setHost: hostHeader !== undefined },
      (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, type: res.headers['content-type'], body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

test.each(['127.0.0.1', `127.0.0.1:4321`, 'localhost', 'LOCALHOST:3000', '[::1]', '[::1]:3000'])(
  'Host %s (loopback) is served',
  async (name) => {
    const response = await get('/things', name);

    expect(response.status).toBe(200);
  },
);

test.each([
  'evil.example',
  'evil.example:3000',
  '127.0.0.1.nip.io',
  'localhost.evil.example',
  '10.0.0.5:3000',
  '0.0.0.0',
])('Host %s is refused with a 403 problem+json, and no function runs', async (name) => {
  invocations.length = 0;

  const response = await get('/things', name);

  expect(response.status).toBe(403);
  expect(response.type).toBe('application/problem+json');
  expect(JSON.parse(response.body)).toMatchObject({ status: 403, title: 'Forbidden host' });
  expect(invocations).toEqual([]);
});

test('an HTTP/1.1 request without a Host header is refused too (by Node itself), and no function runs', async () => {
  invocations.length = 0;

  const response = await get('/things', undefined);

  expect(response.status).toBe(400);
  expect(invocations).toEqual([]);
});

test('the local-only routes are behind the same check', async () => {
  const response = await get('/__local/stats', 'evil.example');

  expect(response.status).toBe(403);
});
