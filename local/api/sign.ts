import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';

export interface SignedRequestOptions {
  method: string;
  body?: string;
  headers?: Record<string, string>;
  /** The caller, as far as the local API is concerned. */
  accessKeyId?: string;
  secretAccessKey?: string;
  region?: string;
}

/**
 * Sends a SigV4-signed (service execute-api) request, as any AWS client of
 * the deployed API would. Locally only the access key id matters: it is the caller.
 */
export async function signedFetch(url: string, options: SignedRequestOptions): Promise<Response> {
  const target = new URL(url);
  const signer = new SignatureV4({
    service: 'execute-api',
    region: options.region ?? 'us-east-1',
    sha256: Sha256,
    credentials: { accessKeyId: options.accessKeyId ?? 'AKIALOCALEXAMPLE', secretAccessKey: options.secretAccessKey ?? 'local' },
  });
  const query: Record<string, string> = {};
  target.searchParams.forEach((value, key) => (query[key] = value));
  const signed = await signer.sign({
    method: options.method,
    protocol: target.protocol,
    hostname: target.hostname,
    port: target.port ? Number(target.port) : undefined,
    path: target.pathname,
    query,
    headers: { host: target.host, ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}), ...options.headers },
    body: options.body,
  });
  return fetch(url, { method: options.method, headers: signed.headers, body: options.body });
}
