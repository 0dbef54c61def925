import autocannon from 'autocannon';
import { ledgerOfRun, writeLedger } from './intents';
import type { Observation } from './observation';
import type { PlannedRequest } from './plan';
import { CREDENTIAL_REFRESH_MS, RequestSigner } from './request-signer';
import type { Caller } from './target';

export type { Observation } from './observation';

/**
 * Sends the plan through autocannon, each request SigV4-signed (service
 * execute-api) in autocannon's request hook, the moment it is sent: API
 * Gateway refuses a signature more than 5 minutes old, so a batch signed ahead
 * has its tail refused whenever it takes longer than that to send. Each
 * caller's credentials are asked of their source before each segment and every
 * minute while one runs, so credentials that expire mid-run (SSO, an assumed
 * role) are replaced by the SDK's provider before they do.
 */
export interface DriveOptions {
  apiUrl: string;
  region: string;
  callers: Caller[];
  connections: number;
  /** Requests per second overall; undefined = as fast as the connections go. */
  rate?: number;
  segmentSize?: number;
  onProgress?: (done: number, total: number) => void;
  /** The clock requests are signed by (epoch ms); tests move it. */
  now?: () => number;
  /** What sends a segment (default: autocannon); tests send through a fake. */
  sendSegment?: SegmentSender;
}

/** A request ready to send: signed when it was taken. */
export interface PreparedRequest {
  planned: PlannedRequest;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface Segment {
  size: number;
  /** The next request, signed now; undefined once the segment is spent. */
  take(): PreparedRequest | undefined;
  /** What came back for a request taken from this segment. */
  answered(request: PreparedRequest, status: number, body: string, replayed: boolean, startedAt: number): void;
}

export interface SegmentTotals {
  errors: number;
  timeouts: number;
  non2xx: number;
  latency: { p50: number; p99: number };
}

export type SegmentSender = (segment: Segment, options: DriveOptions, base: URL) => Promise<SegmentTotals>;

export interface DriveResult {
  observations: Observation[];
  durationMs: number;
  autocannon: { errors: number; timeouts: number; non2xx: number; latencyP50: number; latencyP99: number };
}

export async function drive(plan: readonly PlannedRequest[], options: DriveOptions): Promise<DriveResult> {
  const base = new URL(options.apiUrl);
  const stagePath = base.pathname.replace(/\/$/, '');
  const now = options.now ?? Date.now;
  const signers = new Map(options.callers.map((c) => [c.arn, new RequestSigner(options.region, c.credentials, now)]));
  const refresh = () => Promise.all([...signers.values()].map((s) => s.refresh()));
  const observations: Observation[] = [];
  const started = Date.now();
  const totals = { errors: 0, timeouts: 0, non2xx: 0, latencyP50: 0, latencyP99: 0 };
  const segmentSize = options.segmentSize ?? 2_000;
  const send = options.sendSegment ?? runSegment;

  for (let offset = 0; offset < plan.length; offset += segmentSize) {
    const queue = plan.slice(offset, offset + segmentSize);
    await refresh();
    const timer = setInterval(() => void refresh().catch(() => undefined), CREDENTIAL_REFRESH_MS);
    timer.unref();
    const segment: Segment = {
      size: queue.length,
      take: () => {
        const planned = queue.shift();
        return planned === undefined ? undefined : prepare(planned, base, stagePath, signers.get(planned.caller)!);
      },
      answered: (request, status, body, replayed, startedAt) => {
        observations.push({
          index: request.planned.index,
          status,
          body,
          replayed,
          startedAt,
          latencyMs: Date.now() - startedAt,
        });
        if (observations.length % 25 === 0) options.onProgress?.(observations.length, plan.length);
      },
    };
    let result: SegmentTotals;
    try {
      result = await send(segment, options, base);
    } finally {
      clearInterval(timer);
    }
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
  // The intent ledger, when INTENT_LEDGER names one: what a later --verify-only --intents holds the stack to.
  writeLedger(ledgerOfRun(plan, observations));
  return { observations, durationMs: Date.now() - started, autocannon: totals };
}

function prepare(planned: PlannedRequest, base: URL, stagePath: string, signer: RequestSigner): PreparedRequest {
  const path = `${stagePath}${planned.path}`;
  const body = planned.body === undefined ? undefined : JSON.stringify(planned.body);
  const headers: Record<string, string> = { host: base.host };
  if (body !== undefined) headers['content-type'] = 'application/json';
  // The IETF draft's form: an RFC 9651 sf-string.
  if (planned.idempotencyKey !== undefined) headers['idempotency-key'] = `"${planned.idempotencyKey}"`;
  return {
    planned,
    method: planned.method,
    path,
    headers: signer.sign({ method: planned.method, path, headers, body }),
    body,
  };
}

function runSegment(segment: Segment, options: DriveOptions, base: URL): Promise<SegmentTotals> {
  type Ctx = { current?: PreparedRequest; startedAt?: number };
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: base.origin,
        connections: Math.max(1, Math.min(options.connections, segment.size)),
        amount: segment.size,
        overallRate: options.rate,
        timeout: 30,
        requests: [
          {
            setupRequest: (request: autocannon.Request, context: Ctx) => {
              const next = segment.take();
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
              const replayed = headerValue(headers, 'idempotent-replayed') === 'true';
              segment.answered(current, status, body, replayed, context.startedAt ?? Date.now());
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
