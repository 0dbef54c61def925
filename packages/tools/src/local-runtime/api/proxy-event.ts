import type { APIGatewayProxyEvent } from 'aws-lambda';
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { LOCAL_ACCOUNT_ID } from '../template/model';
import type { RouteMatch } from './router';

export interface Caller {
  accessKeyId: string;
}

/**
 * Local-only convention for role sessions. Access key ids are alphanumeric, so
 * they cannot name a role and a session; real role sessions always carry a
 * session token (`X-Amz-Security-Token`), so the local API reads one from it:
 * a token `local-role:<RoleName>:<SessionName>` makes the request come from
 * `arn:aws:sts::<account>:assumed-role/<RoleName>/<SessionName>`, as a real
 * AssumeRole session would. Without a token, or with any other token (a real
 * one from your own credentials), the access key id is the caller, as an IAM
 * user `arn:aws:iam::<account>:user/<AccessKeyId>`. The token is not verified
 * beyond the signature over it.
 */
export const LOCAL_ROLE_TOKEN_PREFIX = 'local-role:';

/** The role and session a local-role token names (the parts are checked by the function, as on AWS). */
function localRoleSession(token: string | undefined): { role: string; session: string } | undefined {
  if (token === undefined || !token.startsWith(LOCAL_ROLE_TOKEN_PREFIX)) return undefined;
  const rest = token.slice(LOCAL_ROLE_TOKEN_PREFIX.length);
  const colon = rest.indexOf(':');
  // A token without a session gives an ARN without one, which the API refuses (403) as it would on AWS.
  return colon < 0 ? { role: rest, session: '' } : { role: rest.slice(0, colon), session: rest.slice(colon + 1) };
}

/** The identity fields API Gateway fills for an IAM user or an assumed-role session. */
function iamIdentity(caller: Caller | undefined, sessionToken: string | undefined) {
  if (caller === undefined) return { accessKey: null, accountId: null, caller: null, user: null, userArn: null };
  const roleSession = localRoleSession(sessionToken);
  if (roleSession === undefined) {
    const id = caller.accessKeyId;
    return {
      accessKey: id,
      accountId: LOCAL_ACCOUNT_ID,
      caller: id,
      user: id,
      userArn: `arn:aws:iam::${LOCAL_ACCOUNT_ID}:user/${id}`,
    };
  }
  // On AWS, caller and user are `<role id>:<session>`; a stable stand-in for the opaque role id.
  const roleId = `AROA${createHash('sha256').update(roleSession.role).digest('hex').slice(0, 17).toUpperCase()}`;
  return {
    accessKey: caller.accessKeyId,
    accountId: LOCAL_ACCOUNT_ID,
    caller: `${roleId}:${roleSession.session}`,
    user: `${roleId}:${roleSession.session}`,
    userArn: `arn:aws:sts::${LOCAL_ACCOUNT_ID}:assumed-role/${roleSession.role}/${roleSession.session}`,
  };
}

/**
 * The access key id of a SigV4 request: from the `Authorization` header
 * (`AWS4-HMAC-SHA256 Credential=AKID/date/region/service/aws4_request, ...`)
 * or a presigned URL's X-Amz-Credential. The signature itself: verifySignature.
 */
export function sigV4Caller(
  authorization: string | undefined,
  query: URLSearchParams,
): Caller | 'missing' | 'malformed' {
  if (authorization === undefined || authorization.trim() === '') {
    const credential = query.get('X-Amz-Credential');
    if (credential === null) return 'missing';
    return credential.includes('/') ? { accessKeyId: credential.split('/')[0] } : 'malformed';
  }
  const match =
    /^AWS4-HMAC-SHA256\s+Credential=([^/\s,]+)\/[^,\s]+,\s*SignedHeaders=[^,\s]+,\s*Signature=[0-9a-f]+\s*$/i.exec(
      authorization.trim(),
    );
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
 * strings likewise, decoded path parameters, and an IAM identity: an IAM user
 * named by the access key id, or a role session named by a local-role token.
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
  const contentType = String(request.headers['content-type'] ?? '')
    .split(';')[0]
    .trim();
  const binary = inputs.body.length > 0 && inputs.binaryMediaTypes.some((t) => t === '*/*' || t === contentType);
  const now = new Date();
  const hasQuery = Object.keys(query).length > 0;
  const hasParams = Object.keys(match.pathParameters).length > 0;
  const sourceIp = (request.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
  // API Gateway hands the function the decoded path.
  const path = decodePath(inputs.path);
  const tokenHeader = request.headers['x-amz-security-token'];
  const sessionToken =
    (Array.isArray(tokenHeader) ? tokenHeader[tokenHeader.length - 1] : tokenHeader) ??
    url.searchParams.get('X-Amz-Security-Token') ??
    undefined;
  const identity = iamIdentity(caller, sessionToken);
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
        ...identity,
        apiKey: null,
        apiKeyId: null,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp,
        userAgent: String(request.headers['user-agent'] ?? ''),
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
