import { SignatureV4 } from '@smithy/signature-v4';
import type { FunctionHost } from '@exactly-once/tools/local-runtime/host/function-host';
import { ApiServer } from '@exactly-once/tools/local-runtime/api/server';
import { NodeSha256 } from '@exactly-once/tools/local-runtime/api/sha256';
import { LOCAL_SECRET_ACCESS_KEY } from '@exactly-once/tools/local-runtime/api/verify-signature';
import type { RestApiDefinition } from '@exactly-once/tools/local-runtime/template/api';

/**
 * The local API checks SigV4 as API Gateway does on an AWS_IAM method: the
 * signature over the request as it arrived, made with the local secret, dated
 * within 5 minutes of the server's clock, each refusal with API Gateway's
 * status, error type and message, and no function run for any of them.
 */

const NOW = Date.UTC(2026, 5, 1, 12, 0, 0);

const api: RestApiDefinition = {
  logicalId: 'Api',
  name: 'fixture',
  stageName: 'api',
  binaryMediaTypes: [],
  routes: [
    {
      methodLogicalId: 'ThingsPost',
      httpMethod: 'POST',
      resourcePath: '/things',
      resourceId: 'things',
      authorizationType: 'AWS_IAM',
      functionLogicalId: 'ThingsFn',
      requiredParameters: [],
      validatesParameters: false,
      integrationTimeoutMs: 29_000,
    },
  ],
  gatewayResponses: {
    MISSING_AUTHENTICATION_TOKEN: {
      statusCode: 403,
      headers: { 'Content-Type': 'application/json' },
      template: '{"message":$context.error.messageString}',
    },
    INVALID_SIGNATURE: {
      statusCode: 403,
      headers: { 'Content-Type': 'application/json' },
      template: '{"message":$context.error.messageString}',
    },
    DEFAULT_4XX: {
      headers: { 'Content-Type': 'application/json' },
      template: '{"message":$context.error.messageString}',
    },
  },
  unsupportedMethods: [],
};

let server: ApiServer;
let clock = NOW;
const invoked: { requestContext: { identity: { accessKey: string } }; body: string }[] = [];

beforeAll(async () => {
  const host = {
    invoke: async (event: (typeof invoked)[number]) => {
      invoked.push(event);
      return { ok: true, requestId: 'r', payload: { statusCode: 201, body: 'created' } };
    },
  } as unknown as FunctionHost;
  server = new ApiServer({ api, apiId: 'local', hostOf: () => host, port: 0, log: () => undefined, now: () => clock });
  await server.start();
});

afterAll(() => server.stop());

beforeEach(() => {
  invoked.length = 0;
  clock = NOW;
});

interface Signing {
  body?: string;
  accessKeyId?: string;
  secret?: string;
  signedAt?: number;
  /** curl --aws-sigv4 sends no x-amz-content-sha256. */
  withoutContentHash?: boolean;
  path?: string;
}

/** A request signed as an SDK client (or curl) signs it, ready to send or to change on the way. */
async function signed(options: Signing = {}) {
  const target = new URL(`${server.url}${options.path ?? '/things'}`);
  const body = options.body ?? '{"name":"a"}';
  const signer = new SignatureV4({
    service: 'execute-api',
    region: 'eu-west-1',
    sha256: NodeSha256,
    applyChecksum: !options.withoutContentHash,
    credentials: {
      accessKeyId: options.accessKeyId ?? 'AKIAALICE',
      secretAccessKey: options.secret ?? LOCAL_SECRET_ACCESS_KEY,
    },
  });
  const request = await signer.sign(
    {
      method: 'POST',
      protocol: 'http:',
      hostname: target.hostname,
      port: Number(target.port),
      path: target.pathname,
      query: Object.fromEntries(target.searchParams),
      headers: { host: target.host, 'content-type': 'application/json', 'idempotency-key': '"k1"' },
      body,
    },
    { signingDate: new Date(options.signedAt ?? NOW) },
  );
  return { url: target.toString(), headers: request.headers, body };
}

const send = (request: { url: string; headers: Record<string, string>; body: string }) =>
  fetch(request.url, { method: 'POST', headers: request.headers, body: request.body });

test('an unsigned request gets 403 "Missing Authentication Token" and no function runs', async () => {
  const response = await fetch(`${server.url}/things`, { method: 'POST', body: '{}' });

  expect(response.status).toBe(403);
  expect(response.headers.get('x-amzn-errortype')).toBe('MissingAuthenticationTokenException');
  expect(await response.json()).toEqual({ message: 'Missing Authentication Token' });
  expect(invoked).toEqual([]);
});

test('a correctly signed request reaches the function, the access key id as the caller', async () => {
  const response = await send(await signed());

  expect(response.status).toBe(201);
  expect(invoked).toHaveLength(1);
  expect(invoked[0].requestContext.identity.accessKey).toBe('AKIAALICE');
});

test('any access key id signed with the local secret is accepted, each one a caller', async () => {
  await send(await signed({ accessKeyId: 'AKIABOB' }));
  await send(await signed({ accessKeyId: 'AKIACAROL' }));

  expect(invoked.map((e) => e.requestContext.identity.accessKey)).toEqual(['AKIABOB', 'AKIACAROL']);
});

test('a request signed as curl --aws-sigv4 signs it (no x-amz-content-sha256) is accepted', async () => {
  const response = await send(await signed({ withoutContentHash: true }));

  expect(response.status).toBe(201);
});

const MISMATCH =
  /^The request signature we calculated does not match the signature you provided\. Check your AWS Secret Access Key and signing method\. Consult the service documentation for details\.\n\nThe Canonical String for this request should have been\n'POST\n\/things\n/;

test.each<[string, (r: Awaited<ReturnType<typeof signed>>) => void]>([
  ['the body changed after signing (its signed content hash left as it was)', (r) => (r.body = '{"name":"b"}')],
  ['a signed header changed', (r) => (r.headers['idempotency-key'] = '"k2"')],
  ['the path changed', (r) => (r.url = r.url.replace('/things', '/api/things'))],
  [
    'the signature itself changed',
    (r) => (r.headers.authorization = r.headers.authorization.replace(/.$/, (c) => (c === '0' ? '1' : '0'))),
  ],
])(
  "a tampered request (%s) gets 403 InvalidSignatureException with API Gateway's message and no function runs",
  async (_what, tamper) => {
    const request = await signed();
    tamper(request);

    const response = await send(request);

    expect(response.status).toBe(403);
    expect(response.headers.get('x-amzn-errortype')).toBe('InvalidSignatureException');
    const { message } = (await response.json()) as { message: string };
    expect(message).toMatch(/^The request signature we calculated does not match the signature you provided\./);
    expect(invoked).toEqual([]);
  },
);

test('a request signed with another secret gets the mismatch message with the canonical string the gateway computed', async () => {
  const response = await send(await signed({ secret: 'not-the-local-secret' }));

  expect(response.status).toBe(403);
  expect(((await response.json()) as { message: string }).message).toMatch(MISMATCH);
  expect(invoked).toEqual([]);
});

test('a stale request (signed 5 minutes and 1 second before the gateway\'s clock) gets 403 "Signature expired"', async () => {
  const response = await send(await signed({ signedAt: NOW - 301_000 }));

  expect(response.status).toBe(403);
  expect(response.headers.get('x-amzn-errortype')).toBe('InvalidSignatureException');
  expect(await response.json()).toEqual({
    message: 'Signature expired: 20260601T115459Z is now earlier than 20260601T115500Z (20260601T120000Z - 5 min.)',
  });
  expect(invoked).toEqual([]);
});

test('a request signed 5 minutes ago to the second is still inside the window', async () => {
  const response = await send(await signed({ signedAt: NOW - 300_000 }));

  expect(response.status).toBe(201);
});

test('a request dated more than 5 minutes ahead of the gateway\'s clock gets 403 "Signature not yet current"', async () => {
  const response = await send(await signed({ signedAt: NOW + 301_000 }));

  expect(response.status).toBe(403);
  expect(await response.json()).toEqual({
    message:
      'Signature not yet current: 20260601T120501Z is still later than 20260601T120500Z (20260601T120000Z + 5 min.)',
  });
  expect(invoked).toEqual([]);
});

test('a SigV4 Authorization header without X-Amz-Date gets 403 IncompleteSignatureException', async () => {
  const request = await signed();
  delete request.headers['x-amz-date'];

  const response = await send(request);

  expect(response.status).toBe(403);
  expect(response.headers.get('x-amzn-errortype')).toBe('IncompleteSignatureException');
  expect(await response.json()).toEqual({
    message: "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.",
  });
});

test('a presigned URL is checked too: accepted as signed, refused once its body changes', async () => {
  const target = new URL(`${server.url}/things`);
  const signer = new SignatureV4({
    service: 'execute-api',
    region: 'eu-west-1',
    sha256: NodeSha256,
    credentials: { accessKeyId: 'AKIAPRESIGN', secretAccessKey: LOCAL_SECRET_ACCESS_KEY },
  });
  const presigned = await signer.presign(
    {
      method: 'POST',
      protocol: 'http:',
      hostname: target.hostname,
      port: Number(target.port),
      path: target.pathname,
      query: {},
      headers: { host: target.host },
      body: '{"name":"a"}',
    },
    { signingDate: new Date(NOW), expiresIn: 60 },
  );
  const url = `${target.origin}${target.pathname}?${new URLSearchParams(presigned.query as Record<string, string>)}`;

  const accepted = await fetch(url, { method: 'POST', body: '{"name":"a"}' });
  const tampered = await fetch(url, { method: 'POST', body: '{"name":"b"}' });

  expect(accepted.status).toBe(201);
  expect(tampered.status).toBe(403);
  expect(invoked.map((e) => e.requestContext.identity.accessKey)).toEqual(['AKIAPRESIGN']);
});
