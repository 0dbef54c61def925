import type { APIGatewayProxyEvent, Context } from 'aws-lambda';

/**
 * A REST API (v1) proxy event as API Gateway builds it for an IAM-authenticated
 * request; header names keep the case the client sent.
 */
export function apiEvent(options: {
  method: string;
  path: string;
  resource?: string;
  caller?: string | null;
  headers?: Record<string, string | string[]>;
  body?: string | null;
  pathParameters?: Record<string, string>;
}): APIGatewayProxyEvent {
  const headers: Record<string, string> = {};
  const multiValueHeaders: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    const values = Array.isArray(value) ? value : [value];
    multiValueHeaders[name] = values;
    headers[name] = values[values.length - 1];
  }
  const caller = options.caller === undefined ? 'arn:aws:iam::123456789012:user/alice' : options.caller;
  return {
    httpMethod: options.method,
    path: options.path,
    resource: options.resource ?? options.path,
    headers,
    multiValueHeaders,
    body: options.body ?? null,
    isBase64Encoded: false,
    pathParameters: options.pathParameters ?? null,
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    stageVariables: null,
    requestContext: {
      identity: caller === null ? {} : { userArn: caller, caller: 'AIDAEXAMPLE', accessKey: 'AKIAEXAMPLE' },
    } as APIGatewayProxyEvent['requestContext'],
  };
}

/**
 * The Lambda context a handler gets: a deadline `remainingMs` from now on
 * `clock` (the simulation passes its virtual clock and a request id of its own,
 * so nothing draws on its seeded randomness).
 */
export function lambdaContext(
  remainingMs = 10_000,
  options: { clock?: () => number; requestId?: string } = {},
): Context {
  const clock = options.clock ?? Date.now;
  const deadline = clock() + remainingMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: 'test-function',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:test-function',
    memoryLimitInMB: '256',
    awsRequestId: options.requestId ?? `req-${Math.random().toString(16).slice(2)}`,
    logGroupName: '/aws/lambda/test-function',
    logStreamName: 'stream',
    getRemainingTimeInMillis: () => Math.max(0, deadline - clock()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

export const VALID_ORDER = {
  customerId: 'cust-1',
  items: [
    { sku: 'sku-apple', quantity: 2, unitPriceCents: 150 },
    { sku: 'sku-pear', quantity: 1, unitPriceCents: 999 },
  ],
};
