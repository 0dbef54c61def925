import { createHash, createHmac } from 'node:crypto';

/** The SDK's credential shape. */
export interface AwsCredentialIdentity {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  expiration?: Date;
}

/** Credentials, or a provider of them (the SDK's default chain refreshes them before they expire). */
export type CredentialSource = AwsCredentialIdentity | (() => Promise<AwsCredentialIdentity>);

export interface RequestToSign {
  method: string;
  /** The path as it will be sent (percent-encoded), query excluded. */
  path: string;
  query?: Record<string, string>;
  /** host is required; names are sent as given and signed lower-cased. */
  headers: Record<string, string>;
  body?: string;
}

/** How often a running load asks its credential source again: well inside the SDK's 5-minute refresh margin. */
export const CREDENTIAL_REFRESH_MS = 60_000;

const sha256Hex = (data: string) => createHash('sha256').update(data, 'utf8').digest('hex');
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();
/** RFC 3986 escaping, as SigV4 (and the SDK's signer) escape: encodeURIComponent leaves !'()* alone. */
const escapeUri = (s: string) =>
  encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
const amzDate = (ms: number) =>
  new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');

/**
 * SigV4 (service execute-api) computed synchronously at the moment a request
 * is sent, on Node's native SHA-256. A load generator's request hook is
 * synchronous, and API Gateway refuses a signature more than 5 minutes old:
 * signing a batch ahead of sending leaves the tail of a slow batch refused.
 * The algorithm is the SDK signer's (test/unit/request-signer.test.ts holds
 * the two to the same Authorization header), with credentials asked of their
 * source by refresh(), which a running load calls every
 * {@link CREDENTIAL_REFRESH_MS}: SSO and assumed-role credentials expire
 * during a long run, and the SDK's provider hands out new ones before they do.
 *
 * @example
 * ```ts
 * const signer = new RequestSigner('eu-west-1', defaultProvider());
 * await signer.refresh();
 * const headers = signer.sign({ method: 'GET', path: '/api/orders/o1', headers: { host } });
 * ```
 */
export class RequestSigner {
  private credentials?: AwsCredentialIdentity;
  private keyCache?: { scope: string; secret: string; key: Buffer };

  constructor(
    private readonly region: string,
    private readonly source: CredentialSource,
    private readonly now: () => number = Date.now,
  ) {
    if (typeof source !== 'function') this.credentials = source;
  }

  /** Asks the source for credentials (a memoized SDK provider answers from its cache until they near expiry). */
  async refresh(): Promise<void> {
    if (typeof this.source === 'function') this.credentials = await this.source();
  }

  /** The headers to send, Authorization included, signed now. */
  sign(request: RequestToSign): Record<string, string> {
    const credentials = this.credentials;
    if (credentials === undefined) throw new Error('RequestSigner.sign before refresh(): no credentials yet');
    const longDate = amzDate(this.now());
    const shortDate = longDate.slice(0, 8);
    const scope = `${shortDate}/${this.region}/execute-api/aws4_request`;
    const payloadHash = sha256Hex(request.body ?? '');
    const headers: Record<string, string> = {
      ...request.headers,
      'x-amz-date': longDate,
      'x-amz-content-sha256': payloadHash,
    };
    if (credentials.sessionToken !== undefined) headers['x-amz-security-token'] = credentials.sessionToken;
    const canonicalHeaders = Object.entries(headers)
      .map(([name, value]) => [name.toLowerCase(), value.replace(/[ \t]+/g, ' ').trim()] as const)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const signedHeaders = canonicalHeaders.map(([name]) => name).join(';');
    const query = Object.entries(request.query ?? {})
      .map(([k, v]) => `${escapeUri(k)}=${escapeUri(v)}`)
      .sort()
      .join('&');
    const canonical = [
      request.method.toUpperCase(),
      canonicalPath(request.path),
      query,
      canonicalHeaders.map(([name, value]) => `${name}:${value}\n`).join(''),
      signedHeaders,
      payloadHash,
    ].join('\n');
    const toSign = ['AWS4-HMAC-SHA256', longDate, scope, sha256Hex(canonical)].join('\n');
    const signature = createHmac('sha256', this.signingKey(scope, shortDate, credentials))
      .update(toSign, 'utf8')
      .digest('hex');
    headers.authorization = `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
    return headers;
  }

  /** The day's key: derived once per day and secret, not per request. */
  private signingKey(scope: string, shortDate: string, credentials: AwsCredentialIdentity): Buffer {
    const cached = this.keyCache;
    if (cached?.scope === scope && cached.secret === credentials.secretAccessKey) return cached.key;
    let key = hmac(`AWS4${credentials.secretAccessKey}`, shortDate);
    for (const part of [this.region, 'execute-api', 'aws4_request']) key = hmac(key, part);
    this.keyCache = { scope, secret: credentials.secretAccessKey, key };
    return key;
  }
}

/** The SDK signer's canonical path: `.` and `..` resolved, each segment escaped again, slashes kept. */
function canonicalPath(path: string): string {
  const segments: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  const normalized = `${path.startsWith('/') ? '/' : ''}${segments.join('/')}${segments.length > 0 && path.endsWith('/') ? '/' : ''}`;
  return escapeUri(normalized).replace(/%2F/g, '/');
}
