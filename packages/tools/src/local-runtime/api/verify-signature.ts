import { SignatureV4 } from '@smithy/signature-v4';
import type { IncomingHttpHeaders } from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import type { GatewayError } from './gateway-responses';
import type { Caller } from './proxy-event';
import { NodeSha256 } from './sha256';

/**
 * The secret access key of every access key id on the local API. Any access
 * key id still names a caller (an IAM user of that name, or a role session
 * with a local-role token), so a test can be as many callers as it likes; the
 * signature over the request must be made with this secret, as API Gateway
 * requires one made with the key id's own secret.
 */
export const LOCAL_SECRET_ACCESS_KEY = 'local';

/** API Gateway refuses a signature dated more than 5 minutes from its own clock, either way. */
export const SIGNATURE_WINDOW_MS = 5 * 60_000;

const INCOMPLETE =
  "Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' parameters (AWS4-HMAC-SHA256).";

export interface SignedRequestParts {
  method: string;
  /** The path as sent (percent-encoded), without the query. */
  rawPath: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The server's clock, epoch ms. */
  now: number;
}

interface Authorization {
  accessKeyId: string;
  region: string;
  signedHeaders: string[];
  signature: string;
  amzDate: string | undefined;
  /** Presigned URLs: the signature's lifetime in seconds. */
  expiresIn?: number;
  sessionToken?: string;
}

const incomplete = (message = INCOMPLETE): GatewayError => ({
  type: 'DEFAULT_4XX',
  status: 403,
  message,
  errorType: 'IncompleteSignatureException',
});
const invalid = (message: string): GatewayError => ({ type: 'INVALID_SIGNATURE', status: 403, message });
const missing: GatewayError = {
  type: 'MISSING_AUTHENTICATION_TOKEN',
  status: 403,
  message: 'Missing Authentication Token',
};

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

/** The parts of an `Authorization: AWS4-HMAC-SHA256 ...` header or of a presigned URL's query. */
function readAuthorization(parts: SignedRequestParts): Authorization | GatewayError {
  const authorization = header(parts.headers, 'authorization');
  if (authorization === undefined || authorization.trim() === '') {
    const credential = parts.query.get('X-Amz-Credential');
    if (credential === null) return missing;
    const scope = credential.split('/');
    const signedHeaders = parts.query.get('X-Amz-SignedHeaders');
    const signature = parts.query.get('X-Amz-Signature');
    const expires = Number(parts.query.get('X-Amz-Expires'));
    if (scope.length !== 5 || signedHeaders === null || signature === null || !Number.isInteger(expires))
      return incomplete(
        "AWS query-string parameters must include 'X-Amz-Algorithm', 'X-Amz-Credential', 'X-Amz-Signature', 'X-Amz-SignedHeaders', 'X-Amz-Date'.",
      );
    return {
      accessKeyId: scope[0],
      region: scope[2],
      signedHeaders: signedHeaders.split(';'),
      signature,
      amzDate: parts.query.get('X-Amz-Date') ?? undefined,
      expiresIn: expires,
      sessionToken: parts.query.get('X-Amz-Security-Token') ?? undefined,
    };
  }
  const match =
    /^AWS4-HMAC-SHA256\s+Credential=([^/\s,]+)\/(\d{8})\/([^/\s,]+)\/([^/\s,]+)\/aws4_request,\s*SignedHeaders=([^,\s]+),\s*Signature=([0-9a-f]+)\s*$/i.exec(
      authorization.trim(),
    );
  if (match === null) return incomplete();
  const signedHeaders = match[5].toLowerCase().split(';');
  return {
    accessKeyId: match[1],
    region: match[3],
    signedHeaders,
    signature: match[6].toLowerCase(),
    amzDate: header(parts.headers, 'x-amz-date'),
    sessionToken: signedHeaders.includes('x-amz-security-token')
      ? header(parts.headers, 'x-amz-security-token')
      : undefined,
  };
}

/** `20260101T120000Z` as epoch ms, or undefined. */
function parseAmzDate(value: string | undefined): number | undefined {
  const m = value === undefined ? null : /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  if (m === null) return undefined;
  const ms = Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]);
  return Number.isNaN(ms) ? undefined : ms;
}

const amzDate = (ms: number) =>
  new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');

/** A signer that also says what it signed, for the mismatch message API Gateway gives. */
class Recomputer extends SignatureV4 {
  /** The canonical request and string to sign for a request as the signer would build it. */
  explain(request: Parameters<SignatureV4['createCanonicalRequest']>[0], signed: string[], payloadHash: string) {
    const canonicalHeaders: Record<string, string> = {};
    for (const name of signed) {
      const value = request.headers[name];
      if (value !== undefined) canonicalHeaders[name] = value.replace(/[ \t]+/g, ' ').trim();
    }
    return this.createCanonicalRequest(request, canonicalHeaders, payloadHash);
  }

  stringToSign(longDate: string, scope: string, canonical: string) {
    return this.createStringToSign(longDate, scope, canonical, 'AWS4-HMAC-SHA256');
  }
}

/**
 * Checks a request's SigV4 signature as API Gateway does for an AWS_IAM
 * method: the signature recomputed over the request as it arrived (method,
 * path, query, the signed headers, the SHA-256 of the body received) with
 * {@link LOCAL_SECRET_ACCESS_KEY}, and its date within 5 minutes of the
 * server's clock. Returns the caller, or the gateway error API Gateway
 * answers with (status, type and message).
 *
 * @example
 * ```ts
 * const checked = await verifySignature({ method: 'GET', rawPath: '/orders/o1', query, headers: req.headers, body, now: Date.now() });
 * if ('type' in checked) return renderGatewayError(responses, checked, requestId);
 * ```
 */
export async function verifySignature(parts: SignedRequestParts): Promise<Caller | GatewayError> {
  const auth = readAuthorization(parts);
  if ('type' in auth) return auth;
  const signedAt = parseAmzDate(auth.amzDate);
  if (signedAt === undefined)
    return incomplete("Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.");
  const window = auth.expiresIn === undefined ? SIGNATURE_WINDOW_MS : auth.expiresIn * 1000;
  if (signedAt < parts.now - window)
    return invalid(
      `Signature expired: ${amzDate(signedAt)} is now earlier than ${amzDate(parts.now - window)} (${amzDate(parts.now)} - ${window / 60_000} min.)`,
    );
  if (signedAt > parts.now + SIGNATURE_WINDOW_MS)
    return invalid(
      `Signature not yet current: ${amzDate(signedAt)} is still later than ${amzDate(parts.now + SIGNATURE_WINDOW_MS)} (${amzDate(parts.now)} + 5 min.)`,
    );

  const signer = new Recomputer({
    service: 'execute-api',
    region: auth.region,
    sha256: NodeSha256,
    // The header is signed when the client sent it; the signer must not add one the client did not sign.
    applyChecksum: false,
    credentials: {
      accessKeyId: auth.accessKeyId,
      secretAccessKey: LOCAL_SECRET_ACCESS_KEY,
      sessionToken: auth.sessionToken,
    },
  });
  const bodyHash = new NodeSha256();
  bodyHash.update(parts.body);
  const payloadHash = Buffer.from(await bodyHash.digest()).toString('hex');
  const headers: Record<string, string> = {};
  for (const name of auth.signedHeaders) {
    const value = header(parts.headers, name);
    if (value !== undefined) headers[name] = value;
  }
  // The signer trusts a content-sha256 header; the gateway hashes the body it received, so a changed body fails.
  if (headers['x-amz-content-sha256'] !== undefined) headers['x-amz-content-sha256'] = payloadHash;
  const query: Record<string, string | string[]> = {};
  for (const [key, value] of parts.query) {
    if (
      auth.expiresIn !== undefined &&
      /^X-Amz-(Algorithm|Credential|Date|Expires|SignedHeaders|Signature|Security-Token)$/.test(key)
    )
      continue;
    const existing = query[key];
    query[key] = existing === undefined ? value : [...(Array.isArray(existing) ? existing : [existing]), value];
  }
  const host = header(parts.headers, 'host') ?? '127.0.0.1';
  const request = {
    method: parts.method,
    protocol: 'http:',
    hostname: host.replace(/:\d+$/, ''),
    path: parts.rawPath,
    query,
    headers,
    body: parts.body,
  };
  const options = { signingDate: new Date(signedAt), signableHeaders: new Set(auth.signedHeaders) };
  const expected =
    auth.expiresIn === undefined
      ? /Signature=([0-9a-f]+)/.exec((await signer.sign(request, options)).headers.authorization)![1]
      : String((await signer.presign(request, { ...options, expiresIn: auth.expiresIn })).query?.['X-Amz-Signature']);
  if (expected.length === auth.signature.length && timingSafeEqual(Buffer.from(expected), Buffer.from(auth.signature)))
    return { accessKeyId: auth.accessKeyId };

  // API Gateway says what it computed, so a hand-written signer can find its difference.
  const canonical = signer.explain(
    { ...request, headers: { ...headers, 'x-amz-date': amzDate(signedAt) } },
    auth.signedHeaders,
    payloadHash,
  );
  const scope = `${amzDate(signedAt).slice(0, 8)}/${auth.region}/execute-api/aws4_request`;
  const toSign = await signer.stringToSign(amzDate(signedAt), scope, canonical);
  return invalid(
    'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.' +
      `\n\nThe Canonical String for this request should have been\n'${canonical}'\n\nThe String-to-Sign should have been\n'${toSign}'\n`,
  );
}
