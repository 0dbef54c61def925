import type { APIGatewayProxyEvent } from 'aws-lambda';

/**
 * A REST API (v1) proxy event as API Gateway builds it for an IAM-authenticated
 * request; header names keep the case the client sent.
 *
 * @example An idempotent POST signed by an assumed-role session
 * ```ts
 * import { apiEvent } from '@exactly-once/runtime/testing';
 *
 * const event = apiEvent({
 *   method: 'POST',
 *   path: '/orders',
 *   caller: 'arn:aws:sts::111122223333:assumed-role/client-1/session-1',
 *   headers: { 'Content-Type': 'application/json', 'Idempotency-Key': 'key-1' },
 *   body: JSON.stringify(order),
 * });
 * ```
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
