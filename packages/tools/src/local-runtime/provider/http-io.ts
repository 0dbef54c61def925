import type * as http from 'node:http';
import type { ServedApi } from './apis';
import type { GateFault, ProviderEndpoint } from './chaos';
import type { StoredResponse } from './key-store';

/**
 * The local provider's HTTP in and out: a request's body read within bounds, answers written as JSON
 * or RFC 9457 problem details, the chaos gate's and a performed request's answers.
 */

/** A body this far over the limit is no longer drained: the socket is destroyed. */
const MAX_DRAIN_BYTES = 16 * 1024 * 1024;

export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export type Body = { kind: 'ok'; bytes: Buffer } | { kind: 'too-large' };

/** Writes an answer, unless the caller is gone or an answer was already written. */
export function writeReply(res: http.ServerResponse, reply: Reply): void {
  if (res.destroyed || res.headersSent) return;
  const text = JSON.stringify(reply.body);
  res.writeHead(reply.status, {
    'Content-Type': reply.status >= 400 ? 'application/problem+json' : 'application/json',
    'Content-Length': Buffer.byteLength(text),
    ...reply.headers,
  });
  res.end(text);
}

/** RFC 9457 problem details, typed like the project's own API (urn:problem-type:...). */
export function problem(status: number, title: string, detail: string, headers?: Record<string, string>): Reply {
  return {
    status,
    body: { type: `urn:problem-type:${PROBLEM_TYPES[status] ?? 'error'}`, title, status, detail },
    headers,
  };
}

const PROBLEM_TYPES: Record<number, string> = {
  400: 'bad-request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not-found',
  405: 'method-not-allowed',
  409: 'request-in-progress',
  413: 'content-too-large',
  422: 'idempotency-key-reused',
  429: 'rate-limited',
  500: 'internal-error',
  503: 'service-unavailable',
};

export function gateReply(fault: GateFault): Reply {
  if (fault.kind === 'rate-limit')
    return problem(429, 'Too Many Requests', 'Rate limit exceeded (injected).', {
      'Retry-After': String(fault.retryAfterSeconds),
    });
  const detail = fault.kind === 'outage' ? 'The provider is down (injected outage).' : 'Server error burst (injected).';
  const retryAfter = fault.retryAfterSeconds;
  return problem(
    503,
    'Service Unavailable',
    detail,
    retryAfter === undefined ? {} : { 'Retry-After': String(retryAfter) },
  );
}

/** What a performed request answers: 202 queued (accepted for later) or 201 accepted, with the API's own fields. */
export function answerOf(api: ServedApi, effect: PerformedEffect, payload: Record<string, unknown>): StoredResponse {
  const status = api.status === 202 ? 'queued' : 'accepted';
  return { status: api.status, body: { id: effect.id, status, ...api.answerFields(payload) } };
}

export function parseJson(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** The body up to `limit` bytes; beyond it the rest is drained and dropped (up to a cap, then the socket goes). */
export function readBody(req: http.IncomingMessage, limit: number): Promise<Body> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
      else if (size > MAX_DRAIN_BYTES) req.socket.destroy();
    });
    req.on('end', () => resolve(size > limit ? { kind: 'too-large' } : { kind: 'ok', bytes: Buffer.concat(chunks) }));
    req.on('error', reject);
    req.on('close', () => {
      if (!req.complete) reject(new Error('the caller closed the connection before the body ended'));
    });
  });
}

/** Whether the caller closed the connection before the answer was written. */
export function watchAbandon(res: http.ServerResponse): () => boolean {
  let closed = false;
  res.once('close', () => {
    if (!res.writableFinished) closed = true;
  });
  return () => closed || res.destroyed;
}

/** One effect the provider performed: an e-mail sent, a warehouse instruction taken. */
export interface PerformedEffect {
  /** Order of performance, from 1, across endpoints. */
  seq: number;
  endpoint: ProviderEndpoint;
  /** The `Idempotency-Key` the request carried (also on a keyless endpoint, which ignores it); null without one. */
  key: string | null;
  payload: Record<string, unknown>;
  /** ISO-8601, from the emulator's clock. */
  performedAt: string;
  /** The id the provider answered with (`<idPrefix>_000001`: `msg_...` for the shop's mail API). */
  id: string;
  /** What became of the answer: `sent`, `dropped` (chaos), `abandoned` (the caller left first), `pending`. */
  answer: 'pending' | 'sent' | 'dropped' | 'abandoned';
  /** The W3C `traceparent` header the request carried (the caller's provider-call span), as sent; null without one. */
  traceparent: string | null;
}
