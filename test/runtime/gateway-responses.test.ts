import { renderGatewayError } from '@exactly-once/tools/local-runtime/api/gateway-responses';
import { ApiServer } from '@exactly-once/tools/local-runtime/api/server';
import { signedFetch } from '@exactly-once/tools/local-runtime/api/sign';
import { restApiDefinitions, type RestApiDefinition } from '@exactly-once/tools/local-runtime/template/api';
import type { CfnTemplate } from '@exactly-once/tools/local-runtime/template/model';
import { probeStackTemplate } from '../exactly-once/fixtures/probe-stack';

/**
 * The local API answers gateway-made errors with the stack's own gateway responses (the neutral
 * probe stack's POST /things, on the mechanism's IamRestApi): the same status and the same
 * problem+json body, `status` included. No function is reached by these requests, so none is hosted.
 */
let api: RestApiDefinition;
let server: ApiServer;

beforeAll(async () => {
  [api] = restApiDefinitions(probeStackTemplate() as unknown as CfnTemplate);
  server = new ApiServer({
    api,
    apiId: 'local',
    hostOf: (id) => {
      throw new Error(`no function is hosted in this test (asked for ${id})`);
    },
    port: 0,
    log: () => undefined,
  });
  await server.start();
});

afterAll(() => server.stop());

test('a request without Authorization gets 403, a problem+json body and the status in it', async () => {
  const response = await fetch(`${server.url}/things`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'Idempotency-Key': '"k1"' },
    body: '{}',
  });

  expect(response.status).toBe(403);
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  expect(await response.json()).toEqual({
    type: 'urn:problem-type:missing-authentication-token',
    title: 'Missing authentication',
    status: 403,
    detail: 'Missing Authentication Token',
  });
});

test.each([
  ['a bearer token', 'Bearer eyJhbGciOiJIUzI1NiJ9.e30.c2lnbmF0dXJl'],
  ['basic credentials', 'Basic dXNlcjpwYXNz'],
  ['the SigV4 algorithm alone', 'AWS4-HMAC-SHA256'],
])(
  "an Authorization header holding %s gets 403 IncompleteSignatureException with the stack's DEFAULT_4XX problem+json body",
  async (_what, authorization) => {
    const response = await fetch(`${server.url}/things`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': '"k1"', Authorization: authorization },
      body: '{}',
    });

    // API Gateway has no gateway response type for an incomplete signature: the API's DEFAULT_4XX renders it.
    expect(api.gatewayResponses.INCOMPLETE_SIGNATURE).toBeUndefined();
    expect(response.status).toBe(403);
    expect(response.headers.get('content-type')).toBe(api.gatewayResponses.DEFAULT_4XX.headers['Content-Type']);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(response.headers.get('x-amzn-errortype')).toBe('IncompleteSignatureException');
    expect(await response.json()).toEqual({
      type: 'urn:problem-type:default-4xx',
      title: 'Request refused',
      detail: expect.stringMatching(/^Authorization header requires 'Credential'/),
    });
  },
);

test('a signed request without its required Idempotency-Key gets 400 with the status in the body', async () => {
  const response = await signedFetch(`${server.url}/things`, { method: 'POST', body: '{}' });

  expect(response.status).toBe(400);
  const body = (await response.json()) as { status: number; detail: string };
  expect(body.status).toBe(400);
  expect(body.detail).toMatch(/Idempotency-Key/);
});

test("a stale signature gets 403 with the stack's INVALID_SIGNATURE problem+json body and API Gateway's message", async () => {
  const response = await signedFetch(`${server.url}/things`, {
    method: 'POST',
    body: '{}',
    headers: { 'Idempotency-Key': '"k1"' },
    signingDate: new Date(Date.now() - 6 * 60_000),
  });

  expect(response.status).toBe(403);
  expect(response.headers.get('x-amzn-errortype')).toBe('InvalidSignatureException');
  expect(await response.json()).toEqual({
    type: 'urn:problem-type:invalid-signature',
    title: 'Invalid signature',
    status: 403,
    detail: expect.stringMatching(
      /^Signature expired: \d{8}T\d{6}Z is now earlier than \d{8}T\d{6}Z \(\d{8}T\d{6}Z - 5 min\.\)$/,
    ),
  });
});

test('a BAD_REQUEST_BODY whose validator message quotes field names renders JSON that parses', () => {
  const reply = renderGatewayError(
    api.gatewayResponses,
    {
      type: 'BAD_REQUEST_BODY',
      status: 400,
      message: 'Invalid request body',
      validationErrorString: '[object has missing required properties (["amount"])]',
    },
    'request-1',
  );

  expect(reply.status).toBe(400);
  expect(reply.headers['Content-Type']).toBe('application/problem+json');
  expect(JSON.parse(reply.body)).toEqual(expect.objectContaining({ status: 400, detail: 'Invalid request body' }));
});
