import type { APIGatewayProxyEvent } from 'aws-lambda';

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

export { lambdaContext } from '../../lambdas/exactly-once/testing';

export const VALID_ORDER = {
  customerId: 'cust-1',
  items: [
    { sku: 'sku-apple', quantity: 2, unitPriceCents: 150 },
    { sku: 'sku-pear', quantity: 1, unitPriceCents: 999 },
  ],
};
