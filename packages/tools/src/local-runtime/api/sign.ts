import { SignatureV4 } from '@smithy/signature-v4';
import { LOCAL_ROLE_TOKEN_PREFIX } from './proxy-event';
import { NodeSha256 } from './sha256';
import { LOCAL_SECRET_ACCESS_KEY } from './verify-signature';

export interface SignedRequestOptions {
  method: string;
  body?: string;
  headers?: Record<string, string>;
  /** The caller, as far as the local API is concerned. */
  accessKeyId?: string;
  /** Default: the local API's secret, LOCAL_SECRET_ACCESS_KEY. */
  secretAccessKey?: string;
  /** Temporary credentials' token, sent as X-Amz-Security-Token; see localRoleSessionToken. */
  sessionToken?: string;
  region?: string;
  /** When the request says it was signed (default now): the local API refuses one 5 minutes off. */
  signingDate?: Date;
}

/**
 * The session token that makes the local API see a request as coming from a
 * session of a role: `arn:aws:sts::<account>:assumed-role/<role>/<session>`.
 * Local only; on AWS the token comes from STS with the rest of the credentials.
 */
export function localRoleSessionToken(role: string, session: string): string {
  return `${LOCAL_ROLE_TOKEN_PREFIX}${role}:${session}`;
}

/**
 * Sends a SigV4-signed (service execute-api) request, as any AWS client of
 * the deployed API would. Locally the access key id (an IAM user) or a
 * local-role session token (a role session) is the caller, and the secret is
 * the local API's (LOCAL_SECRET_ACCESS_KEY) whatever the key id.
 */
export async function signedFetch(url: string, options: SignedRequestOptions): Promise<Response> {
  const target = new URL(url);
  const signer = new SignatureV4({
    service: 'execute-api',
    region: options.region ?? 'us-east-1',
    sha256: NodeSha256,
    credentials: {
      accessKeyId: options.accessKeyId ?? 'AKIALOCALEXAMPLE',
      secretAccessKey: options.secretAccessKey ?? LOCAL_SECRET_ACCESS_KEY,
      sessionToken: options.sessionToken,
    },
  });
  // Every value of a repeated parameter is signed (`?tag=a&tag=b`), as it is sent.
  const query: Record<string, string | string[]> = {};
  target.searchParams.forEach((value, key) => {
    const seen = query[key];
    query[key] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
  });
  const signed = await signer.sign(
    {
      method: options.method,
      protocol: target.protocol,
      hostname: target.hostname,
      port: target.port ? Number(target.port) : undefined,
      path: target.pathname,
      query,
      headers: {
        host: target.host,
        ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...options.headers,
      },
      body: options.body,
    },
    { signingDate: options.signingDate },
  );
  return fetch(url, { method: options.method, headers: signed.headers, body: options.body });
}
