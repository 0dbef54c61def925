import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import autocannon from 'autocannon';
import type { PlannedRequest } from './plan';
import type { Caller } from './target';

/**
 * Sends the plan through autocannon, with each request signed by the SDK's own
 * SigV4 signer (service execute-api). Signing is async and autocannon's request
 * hook is sync, so each segment is signed just before it is sent (a signature
 * is valid for 15 minutes; a segment never takes that long).
 */
export interface Observation {
  index: number;
  status: number | 'no-response';
  body?: string;
  replayed: boolean;
  startedAt: number;
  latencyMs: number;
}

export interface DriveOptions {
  apiUrl: string;
  region: string;
  callers: Caller[];
  connections: number;
  /** Requests per second overall; undefined = as fast as the connections go. */
  rate?: number;
  segmentSize?: number;
  onProgress?: (done: number, total: number) => void;
}

export interface DriveResult {
  observations: Observation[];
  durationMs: number;
  autocannon: { errors: number; timeouts: number; non2xx: number; latencyP50: number; latencyP99: number };
}

interface SignedRequest {
  planned: PlannedRequest;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export async function drive(plan: readonly PlannedRequest[], options: DriveOptions): Promise<DriveResult> {
  const base = new URL(options.apiUrl);
  const stagePath = base.pathname.replace(/\/$/, '');
  const signers = new Map(
    options.callers.map((c) => [
      c.arn,
      new SignatureV4({ service: 'execute-api', region: options.region, sha256: Sha256, credentials: c.credentials }),
    ]),
  );
  const observations: Observation[] = [];
  const started = Date.now();
  const totals = { errors: 0, timeouts: 0, non2xx: 0, latencyP50: 0, latencyP99: 0 };
  const segmentSize = options.segmentSize ?? 2_000;

  for (let offset = 0; offset < plan.length; offset += segmentSize) {
    const segment = plan.slice(offset, offset + segmentSize);
    const signed = await Promise.all(segment.map((p) => sign(p, base, stagePath, signers.get(p.caller)!)));
    const result = await runSegment(signed, options, base, observations, () =>
      options.onProgress?.(observations.length, plan.length),
    );
    totals.errors += result.errors;
    totals.timeouts += result.timeouts;
    totals.non2xx += result.non2xx;
    totals.latencyP50 = Math.max(totals.latencyP50, result.latency.p50);
    totals.latencyP99 = Math.max(totals.latencyP99, result.latency.p99);
  }
  // Requests autocannon never got an answer to (connection errors, timeouts).
  const seen = new Set(observations.map((o) => o.index));
  for (const p of plan) {
    if (!seen.has(p.index))
      observations.push({ index: p.index, status: 'no-response', replayed: false, startedAt: started, latencyMs: 0 });
  }
  observations.sort((a, b) => a.index - b.index);
  return { observations, durationMs: Date.now() - started, autocannon: totals };
}

async function sign(
  planned: PlannedRequest,
  base: URL,
  stagePath: string,
  signer: SignatureV4,
): Promise<SignedRequest> {
  const path = `${stagePath}${planned.path}`;
  const body = planned.body === undefined ? undefined : JSON.stringify(planned.body);
  const headers: Record<string, string> = { host: base.host };
  if (body !== undefined) headers['content-type'] = 'application/json';
  // The IETF draft's form: an RFC 9651 sf-string.
  if (planned.idempotencyKey !== undefined) headers['idempotency-key'] = `"${planned.idempotencyKey}"`;
  const request = await signer.sign({
    method: planned.method,
    protocol: base.protocol,
    hostname: base.hostname,
    port: base.port ? Number(base.port) : undefined,
    path,
    headers,
    body,
  });
  return { planned, method: planned.method, path, headers: request.headers as Record<string, string>, body };
}

function runSegment(
  segment: SignedRequest[],
  options: DriveOptions,
  base: URL,
  observations: Observation[],
  progress: () => void,
): Promise<autocannon.Result> {
  const queue = [...segment];
  type Ctx = { current?: SignedRequest; startedAt?: number };
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: base.origin,
        connections: Math.max(1, Math.min(options.connections, segment.length)),
        amount: segment.length,
        overallRate: options.rate,
        timeout: 30,
        requests: [
          {
            setupRequest: (request: autocannon.Request, context: Ctx) => {
              const next = queue.shift();
              if (next === undefined) return request; // amount reached; autocannon stops on its own
              context.current = next;
              context.startedAt = Date.now();
              return {
                ...request,
                method: next.method,
                path: next.path,
                headers: next.headers,
                body: next.body,
              } as autocannon.Request;
            },
            onResponse: (status: number, body: string, context: Ctx, headers?: Record<string, string>) => {
              const current = context.current;
              if (current === undefined) return;
              context.current = undefined;
              observations.push({
                index: current.planned.index,
                status,
                body,
                replayed: headerValue(headers, 'idempotent-replayed') === 'true',
                startedAt: context.startedAt ?? Date.now(),
                latencyMs: Date.now() - (context.startedAt ?? Date.now()),
              });
              if (observations.length % 25 === 0) progress();
            },
          } as unknown as autocannon.Request,
        ],
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
    instance.on('error', reject);
  });
}

/** autocannon hands headers over as a flat [name, value, ...] list or an object, by version. */
function headerValue(headers: unknown, name: string): string | undefined {
  if (Array.isArray(headers)) {
    for (let i = 0; i + 1 < headers.length; i += 2)
      if (String(headers[i]).toLowerCase() === name) return String(headers[i + 1]);
    return undefined;
  }
  if (headers !== null && typeof headers === 'object') {
    for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === name) return String(v);
  }
  return undefined;
}
