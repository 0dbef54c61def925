import type { FunctionHost } from '@exactly-once/tools/local-runtime/host/function-host';
import { sigV4Caller } from '@exactly-once/tools/local-runtime/api/proxy-event';
import { ApiServer } from '@exactly-once/tools/local-runtime/api/server';
import type { RestApiDefinition } from '@exactly-once/tools/local-runtime/template/api';

/**
 * The local API's authentication errors on a hand-made API definition (no
 * synth, no emulators): which gateway response each one is rendered with, as
 * API Gateway renders it. The stack's own responses: test/runtime/gateway-responses.test.ts.
 */

const SIGNED =
  'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-east-1/execute-api/aws4_request, SignedHeaders=host, Signature=abc123';
/** Authorization headers that are not SigV4 signatures. */
const NOT_SIGV4: [string, string][] = [
  ['a bearer token', 'Bearer eyJhbGciOiJIUzI1NiJ9.e30.c2lnbmF0dXJl'],
  ['basic credentials', 'Basic dXNlcjpwYXNz'],
  ['the algorithm alone', 'AWS4-HMAC-SHA256'],
];

const api: RestApiDefinition = {
  logicalId: 'Api',
  name: 'fixture',
  stageName: 'api',
  binaryMediaTypes: [],
  routes: [
    {
      methodLogicalId: 'ItemsGet',
      httpMethod: 'GET',
      resourcePath: '/items',
      resourceId: 'items',
      authorizationType: 'AWS_IAM',
      functionLogicalId: 'ItemsFn',
      requiredParameters: [],
      validatesParameters: false,
      integrationTimeoutMs: 29_000,
    },
  ],
  gatewayResponses: {
    MISSING_AUTHENTICATION_TOKEN: {
      statusCode: 403,
      headers: { 'Content-Type': 'application/problem+json' },
      template: '{"type":"urn:missing","status":403,"detail":$context.error.messageString}',
    },
    INVALID_SIGNATURE: {
      statusCode: 403,
      headers: { 'Content-Type': 'application/problem+json' },
      template: '{"type":"urn:invalid-signature","status":403,"detail":$context.error.messageString}',
    },
    DEFAULT_4XX: {
      headers: { 'Content-Type': 'application/problem+json', 'X-Fallback': 'yes' },
      template: '{"type":"urn:default-4xx","detail":$context.error.messageString}',
    },
  },
  unsupportedMethods: [],
};

let server: ApiServer;
const invoked: unknown[] = [];

beforeAll(async () => {
  const host = {
    invoke: async (event: unknown) => {
      invoked.push(event);
      return { ok: true, requestId: 'r', payload: { statusCode: 200, body: 'reached' } };
    },
  } as unknown as FunctionHost;
  server = new ApiServer({ api, apiId: 'local', hostOf: () => host, port: 0, log: () => undefined });
  await server.start();
});

afterAll(() => server.stop());

beforeEach(() => {
  invoked.length = 0;
});

const get = (authorization?: string) =>
  fetch(`${server.url}/items`, { headers: authorization === undefined ? {} : { Authorization: authorization } });

test.each(NOT_SIGV4)('sigV4Caller reads %s as a malformed signature, not as a caller', (_what, authorization) => {
  expect(sigV4Caller(authorization, new URLSearchParams())).toBe('malformed');
});

test.each(NOT_SIGV4)(
  'an Authorization header holding %s gets 403 IncompleteSignatureException, rendered with the DEFAULT_4XX response, and no function runs',
  async (_what, authorization) => {
    const response = await get(authorization);

    expect(response.status).toBe(403);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(response.headers.get('x-fallback')).toBe('yes');
    expect(response.headers.get('x-amzn-errortype')).toBe('IncompleteSignatureException');
    expect(await response.json()).toEqual({
      type: 'urn:default-4xx',
      detail: expect.stringMatching(/Authorization header requires 'Credential'/),
    });
    expect(invoked).toEqual([]);
  },
);

test('DEFAULT_4XX with a status of its own sets it for the incomplete signature too, as for every 4XX without its own response', async () => {
  const custom = new ApiServer({
    api: {
      ...api,
      gatewayResponses: { DEFAULT_4XX: { ...api.gatewayResponses.DEFAULT_4XX, statusCode: 401 } },
    },
    apiId: 'local',
    hostOf: () => {
      throw new Error('no function runs');
    },
    port: 0,
    log: () => undefined,
  });
  await custom.start();
  try {
    const response = await fetch(`${custom.url}/items`, { headers: { Authorization: 'Bearer t' } });

    expect(response.status).toBe(401);
    expect(response.headers.get('x-amzn-errortype')).toBe('IncompleteSignatureException');
  } finally {
    await custom.stop();
  }
});

test('without Authorization: 403 with the MISSING_AUTHENTICATION_TOKEN response', async () => {
  const response = await get();

  expect(response.status).toBe(403);
  expect(response.headers.get('x-amzn-errortype')).toBe('MissingAuthenticationTokenException');
  expect(await response.json()).toEqual({ type: 'urn:missing', status: 403, detail: 'Missing Authentication Token' });
});

test('a SigV4-shaped Authorization header whose signature does not verify gets the INVALID_SIGNATURE response', async () => {
  const response = await fetch(`${server.url}/items`, {
    headers: { Authorization: SIGNED, 'X-Amz-Date': new Date().toISOString().replace(/[-:]|\.\d{3}/g, '') },
  });

  expect(response.status).toBe(403);
  expect(response.headers.get('x-amzn-errortype')).toBe('InvalidSignatureException');
  expect(await response.json()).toEqual({
    type: 'urn:invalid-signature',
    status: 403,
    detail: expect.stringMatching(/^The request signature we calculated does not match/),
  });
  expect(invoked).toEqual([]);
});

test('an unknown path keeps API Gateway\'s 403 "Missing Authentication Token"; the log line says it is no route and lists the routes', async () => {
  const lines: string[] = [];
  const logged = new ApiServer({
    api,
    apiId: 'local',
    hostOf: () => undefined as never,
    port: 0,
    log: (l) => lines.push(l),
  });
  await logged.start();
  try {
    const response = await fetch(`${logged.url}/itemz`, { headers: { Authorization: SIGNED } });
    const known = await fetch(`${logged.url}/items`);

    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({ type: 'urn:missing', status: 403, detail: 'Missing Authentication Token' });
    expect(known.status).toBe(403);
    expect(lines[0]).toMatch(
      /^GET \/itemz 403 \d+ms \(no route GET \/itemz: API Gateway answers an unknown path or method with 403 "Missing Authentication Token"; the routes: GET \/items\)$/,
    );
    // A known route refused for its missing signature is not called unknown.
    expect(lines[1]).toMatch(/^GET \/items 403 \d+ms$/);
  } finally {
    await logged.stop();
  }
});
