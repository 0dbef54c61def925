import type { APIGatewayProxyEvent } from 'aws-lambda';
import type { IncomingMessage } from 'node:http';
import { LOCAL_ACCOUNT_ID } from '../template/model';
import type { RouteMatch } from './router';

export interface Caller {
  accessKeyId: string;
}

/**
 * The access key id of a SigV4 request: from the `Authorization` header
 * (`AWS4-HMAC-SHA256 Credential=AKID/date/region/service/aws4_request, ...`)
 * or a presigned URL's X-Amz-Credential. Signatures are not verified locally.
 */
export function sigV4Caller(authorization: string | undefined, query: URLSearchParams): Caller | 'missing' | 'malformed' {
  if (authorization === undefined || authorization.trim() === '') {
    const credential = query.get('X-Amz-Credential');
    if (credential === null) return 'missing';
    return credential.includes('/') ? { accessKeyId: credential.split('/')[0] } : 'malformed';
  }
  const match = /^AWS4-HMAC-SHA256\s+Credential=([^/\s,]+)\/[^,\s]+,\s*SignedHeaders=[^,\s]+,\s*Signature=[0-9a-f]+\s*$/i.exec(authorization.trim());
  return match === null ? 'malformed' : { accessKeyId: match[1] };
}

export interface EventInputs {
  request: IncomingMessage;
  url: URL;
  /** Path below the stage, e.g. `/orders/abc`. */
  path: string;
  body: Buffer;
  match: RouteMatch;
  caller?: Caller;
  apiId: string;
  stage: string;
  requestId: string;
  binaryMediaTypes: string[];
}

/**
 * A REST API (v1) Lambda proxy event, built as API Gateway builds it: header
 * names as sent, last value in `headers` and all in `multiValueHeaders`, query
 * strings likewise, decoded path parameters, and an IAM identity whose access
 * key is the caller.
 */
export function proxyEvent(inputs: EventInputs): APIGatewayProxyEvent {
  const { request, url, match, caller } = inputs;
  const multiValueHeaders: Record<string, string[]> = {};
  const raw = request.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) (multiValueHeaders[raw[i]] ??= []).push(raw[i + 1]);
  const headers = Object.fromEntries(Object.entries(multiValueHeaders).map(([k, v]) => [k, v[v.length - 1]]));
  const multiValueQuery: Record<string, string[]> = {};
  for (const [k, v] of url.searchParams) (multiValueQuery[k] ??= []).push(v);
  const query = Object.fromEntries(Object.entries(multiValueQuery).map(([k, v]) => [k, v[v.length - 1]]));
  const contentType = String(request.headers['content-type'] ?? '').split(';')[0].trim();
  const binary = inputs.body.length > 0 && inputs.binaryMediaTypes.some((t) => t === '*/*' || t === contentType);
  const now = new Date();
  const hasQuery = Object.keys(query).length > 0;
  const hasParams = Object.keys(match.pathParameters).length > 0;
  const sourceIp = (request.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
  // API Gateway hands the function the decoded path.
  const path = decodePath(inputs.path);
  return {
    resource: match.route.resourcePath,
    path,
    httpMethod: request.method ?? 'GET',
    headers,
    multiValueHeaders,
    queryStringParameters: hasQuery ? query : null,
    multiValueQueryStringParameters: hasQuery ? multiValueQuery : null,
    pathParameters: hasParams ? match.pathParameters : null,
    stageVariables: null,
    requestContext: {
      accountId: LOCAL_ACCOUNT_ID,
      apiId: inputs.apiId,
      authorizer: null,
      domainName: String(request.headers.host ?? '127.0.0.1'),
      domainPrefix: String(request.headers.host ?? '127').split('.')[0],
      extendedRequestId: inputs.requestId,
      httpMethod: request.method ?? 'GET',
      identity: {
        accessKey: caller?.accessKeyId ?? null,
        accountId: caller ? LOCAL_ACCOUNT_ID : null,
        apiKey: null,
        apiKeyId: null,
        caller: caller?.accessKeyId ?? null,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp,
        user: caller?.accessKeyId ?? null,
        userAgent: String(request.headers['user-agent'] ?? ''),
        userArn: caller ? `arn:aws:iam::${LOCAL_ACCOUNT_ID}:user/${caller.accessKeyId}` : null,
      },
      path: `/${inputs.stage}${path}`,
      protocol: `HTTP/${request.httpVersion}`,
      requestId: inputs.requestId,
      requestTime: apiGatewayTime(now),
      requestTimeEpoch: now.getTime(),
      resourceId: match.route.resourceId,
      resourcePath: match.route.resourcePath,
      stage: inputs.stage,
    },
    body: inputs.body.length === 0 ? null : binary ? inputs.body.toString('base64') : inputs.body.toString('utf8'),
    isBase64Encoded: binary,
  };
}

function decodePath(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/** `09/Apr/2015:12:34:56 +0000`, API Gateway's requestTime format. */
function apiGatewayTime(date: Date): string {
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${pad(date.getUTCDate())}/${months[date.getUTCMonth()]}/${date.getUTCFullYear()}:${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())} +0000`;
}
