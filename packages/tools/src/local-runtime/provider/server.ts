import { timingSafeEqual } from 'node:crypto';
import * as http from 'node:http';
import { canonicalJson } from '@exactly-once/runtime/runtime/canonical-json';
import { parseIdempotencyKey } from '@exactly-once/runtime/api/idempotency-key';
import { isLoopbackHost } from '../api/server';
import type { ServedApi } from './apis';
import { Chaos, parseChaosPlan, type ChaosCounters, type ProviderChaosPlan, type ProviderEndpoint } from './chaos';
import { KeyStore } from './key-store';
import type { PerformedEffect } from './http-io';
import { answerOf, gateReply, parseJson, problem, readBody, watchAbandon, writeReply, type Reply } from './http-io';

/** The API key the emulator expects when none is given. */
export const DEFAULT_PROVIDER_API_KEY = 'local-provider-key';
/** Stripe's window: a key is remembered for 24 hours after its first request. */
export const DEFAULT_KEY_WINDOW_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_MAX_BODY_BYTES = 256 * 1024;
export interface ProviderEmulatorOptions {
  /** The APIs it serves: every provider the domain's consumers name, as the domain describes them (`servedApis`). */
  apis: readonly ServedApi[];
  /** Loopback port; 0 or absent: one the OS picks. */
  port?: number;
  /** The key callers must send as `Authorization: Bearer <key>` (default {@link DEFAULT_PROVIDER_API_KEY}). */
  apiKey?: string;
  /** Endpoints that ignore the idempotency key, like SMTP or SES: every call is a send. */
  keyless?: ProviderEndpoint[];
  /** A keyed endpoint refuses a request without `Idempotency-Key` (400). Default: performs it unkeyed, as Stripe does. */
  requireKey?: boolean;
  /** How long a key is remembered after its first request (default 24 h). */
  keyWindowMs?: number;
  /** How long a performed request runs before it answers (its key is in progress meanwhile). Default 0. */
  latencyMs?: number;
  /** Request bodies above this get 413 (default 256 KiB). */
  maxBodyBytes?: number;
  /** The clock (epoch milliseconds) for `performedAt`, the key window and the outage window. */
  now?: () => number;
  /** The chaos in force from the start (default none); `setChaos` replaces it. */
  chaos?: ProviderChaosPlan;
  /** One line per request, for the runtime's log (default: silent). */
  log?: (line: string) => void;
}

export type { PerformedEffect };

/** Per endpoint and key: what the requests that reached the key layer got. */
export interface KeyRequestCounts {
  requests: number;
  performed: number;
  replayed: number;
  inProgress: number;
  payloadMismatch: number;
  /** Refused by the chaos gate (outage, 503 burst, 429). */
  chaosRefused: number;
  /** When each replay and 409 happened (ISO-8601), so a report can chart them over a run. */
  absorbedAt?: string[];
}

export interface ProviderCounters {
  /** Requests to the provider routes, whatever their outcome. */
  requests: number;
  performed: number;
  replayed: number;
  /** 409: the key's first request was still running. */
  inProgress: number;
  /** 422: the key was used with another payload. */
  payloadMismatch: number;
  /** Keys forgotten at the end of their window. */
  keysExpired: number;
  /** Performed, but the caller had gone before the answer (it timed out): an ambiguous outcome on its side. */
  answersAbandoned: number;
  /** Refused before anything was performed, by status: 400, 401, 403, 404, 405, 413. */
  rejected: Record<string, number>;
  chaos: ChaosCounters;
}

/** The provider's log: what it performed and the evidence of what it refused (`GET /__log`). */
export interface ProviderLog {
  performed: PerformedEffect[];
  /** The endpoints that ignore the idempotency key (every call is a send). */
  keyless: ProviderEndpoint[];
  keys: Record<ProviderEndpoint, Record<string, KeyRequestCounts>>;
  counters: ProviderCounters;
  chaos: ProviderChaosPlan;
}

export interface ProviderEmulator {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** Each endpoint's full URL. */
  endpoints: Record<ProviderEndpoint, string>;
  /** A snapshot of the log (the same JSON as `GET /__log`). */
  log(): ProviderLog;
  /** Replaces the chaos plan (`{}`: none). Fault counts start again; the counters keep counting. */
  setChaos(plan: ProviderChaosPlan): void;
  /** Forgets every answered key at least `olderThanMs` old (default: all), taken at or after `takenSince` if given; returns how many. */
  forgetKeys(olderThanMs?: number, takenSince?: number): number;
  /** Closes the server and every connection; answers still being delayed are never sent. */
  stop(): Promise<void>;
}

/**
 * Starts the local provider: one HTTP server on 127.0.0.1 serving one `POST` route per provider API
 * (`options.apis`; for the shop `POST /mail/messages` and `POST /warehouse/instructions`) with
 * Stripe-like idempotency keys, optional keyless endpoints, seeded chaos and a JSON log of what it
 * performed (`GET /__log`). See ./README.md.
 */
export async function startProviderEmulator(options: ProviderEmulatorOptions): Promise<ProviderEmulator> {
  const provider = new LocalProvider(options);
  const port = await provider.listen(options.port ?? 0);
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    port,
    endpoints: Object.fromEntries(provider.apis.map((api) => [api.name, `${url}${api.route}`])),
    log: () => provider.snapshot(),
    setChaos: (plan) => provider.chaos.set(plan),
    forgetKeys: (olderThanMs, takenSince) => provider.keys.forget(olderThanMs ?? 0, takenSince),
    stop: () => provider.stop(),
  };
}

/** The statuses counted in `counters.rejected`: refused before the key layer. */
const REJECTIONS = new Set([400, 401, 403, 404, 405, 413]);
const CONTROL_ROUTES: Record<string, string[]> = {
  '/__health': ['GET'],
  '/__log': ['GET'],
  '/__counters': ['GET'],
  '/__chaos': ['GET', 'PUT'],
  '/__keys/forget': ['POST'],
};

class LocalProvider {
  readonly keys: KeyStore;
  readonly chaos = new Chaos();
  readonly apis: readonly ServedApi[];
  private readonly apiOfRoute: ReadonlyMap<string, ServedApi>;
  private readonly apiNamed: ReadonlyMap<string, ServedApi>;
  private readonly server: http.Server;
  private readonly apiKey: Buffer;
  private readonly now: () => number;
  private readonly keyless: Set<ProviderEndpoint>;
  private readonly maxBodyBytes: number;
  private readonly performed: PerformedEffect[] = [];
  private readonly perKey: Record<ProviderEndpoint, Record<string, KeyRequestCounts>>;
  private readonly counters: Omit<ProviderCounters, 'chaos' | 'keysExpired'> = {
    requests: 0,
    performed: 0,
    replayed: 0,
    inProgress: 0,
    payloadMismatch: 0,
    answersAbandoned: 0,
    rejected: {},
  };
  private readonly waits = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  private stopped = false;

  constructor(private readonly options: ProviderEmulatorOptions) {
    this.now = options.now ?? Date.now;
    this.apis = options.apis;
    this.apiOfRoute = new Map(this.apis.map((api) => [api.route, api]));
    this.apiNamed = new Map(this.apis.map((api) => [api.name, api]));
    this.perKey = Object.fromEntries(this.apis.map((api) => [api.name, {}]));
    for (const name of options.keyless ?? [])
      if (!this.apiNamed.has(name))
        throw new Error(`keyless: no provider API named "${name}" (served: ${[...this.apiNamed.keys()].join(', ')})`);
    this.apiKey = Buffer.from(options.apiKey ?? DEFAULT_PROVIDER_API_KEY);
    this.keyless = new Set(options.keyless ?? []);
    this.maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    this.keys = new KeyStore(options.keyWindowMs ?? DEFAULT_KEY_WINDOW_MS, this.now);
    if (options.chaos !== undefined) this.chaos.set(options.chaos);
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch((error: Error) => {
        this.options.log?.(`internal error: ${error.message}`);
        if (!res.headersSent) writeReply(res, problem(500, 'Internal Server Error', error.message));
        else res.destroy();
      });
    });
    // Keep-alive sockets must not hold up stop().
    this.server.keepAliveTimeout = 5_000;
  }

  listen(port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', (error: NodeJS.ErrnoException) =>
        reject(error.code === 'EADDRINUSE' ? new Error(`Local provider: port ${port} is already in use`) : error),
      );
      this.server.listen(port, '127.0.0.1', () => {
        const address = this.server.address();
        resolve(typeof address === 'object' && address !== null ? address.port : port);
      });
    });
  }

  stop(): Promise<void> {
    this.stopped = true;
    for (const wait of this.waits) {
      clearTimeout(wait.timer);
      wait.resolve();
    }
    this.waits.clear();
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  snapshot(): ProviderLog {
    return structuredClone({
      performed: this.performed,
      keyless: [...this.keyless].sort(),
      keys: this.perKey,
      counters: {
        ...this.counters,
        keysExpired: this.keys.stats.expired,
        chaos: { ...this.chaos.counters, keysForgottenEarly: this.keys.stats.forgottenEarly },
      },
      chaos: this.chaos.current(),
    });
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    // The whole body is read (bounded) before any answer: a reply while the caller still sends is a reset on its side.
    const body = await readBody(req, this.maxBodyBytes);
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    const endpoint = this.apiOfRoute.get(path)?.name;
    if (endpoint !== undefined) this.counters.requests += 1;
    const reply = (r: Reply | 'destroyed', note = '') => {
      if (r !== 'destroyed' && REJECTIONS.has(r.status)) this.reject(r.status);
      if (r === 'destroyed') req.socket.destroy();
      else writeReply(res, r);
      this.options.log?.(`${req.method} ${path}${note} -> ${r === 'destroyed' ? 'socket destroyed' : r.status}`);
    };
    if (!isLoopbackHost(req.headers.host))
      return reply(
        problem(403, 'Forbidden host', `Host ${JSON.stringify(req.headers.host ?? '')} is not loopback.`, {
          Connection: 'close',
        }),
      );
    const methods = endpoint !== undefined ? ['POST'] : CONTROL_ROUTES[path];
    if (methods === undefined) return reply(problem(404, 'Not Found', `No route ${path}.`));
    if (!methods.includes(req.method ?? ''))
      return reply(
        problem(405, 'Method Not Allowed', `${path} takes ${methods.join(', ')}, not ${req.method}.`, {
          Allow: methods.join(', '),
        }),
      );
    if (path === '/__health') return reply({ status: 200, body: { status: 'ok' } });
    if (path === '/__log') return reply({ status: 200, body: this.snapshot() });
    // The counters alone: a sampler reads them every second, and the whole log grows with the run.
    if (path === '/__counters') return reply({ status: 200, body: this.snapshot().counters });
    const refused = this.authorize(req);
    if (refused !== undefined) return reply(refused);
    if (body.kind === 'too-large')
      return reply(
        problem(413, 'Content Too Large', `The request body is larger than ${this.maxBodyBytes} bytes.`, {
          Connection: 'close',
        }),
      );
    if (path === '/__chaos') {
      if (req.method === 'PUT') {
        const raw = parseJson(body.bytes);
        if (raw === undefined) return reply(problem(400, 'Bad Request', 'The chaos plan must be JSON.'));
        this.chaos.set(parseChaosPlan(raw));
      }
      return reply({ status: 200, body: this.chaos.current() });
    }
    // The key window passing at once, on demand: what a redrive days later meets at a real provider.
    if (path === '/__keys/forget') {
      const raw = body.bytes.length === 0 ? {} : parseJson(body.bytes);
      const olderThanMs = (raw as { olderThanMs?: unknown } | undefined)?.olderThanMs ?? 0;
      // takenSince (epoch ms): only the keys a run took, so a run forgets and counts its own keys, not earlier runs'.
      const takenSince = (raw as { takenSince?: unknown } | undefined)?.takenSince;
      const whole = (n: unknown) => typeof n === 'number' && Number.isInteger(n) && n >= 0;
      if (!whole(olderThanMs) || (takenSince !== undefined && !whole(takenSince)))
        return reply(
          problem(
            400,
            'Bad Request',
            'The body must be {} or {"olderThanMs": <whole number >= 0>, "takenSince": <epoch ms>} (each optional).',
          ),
        );
      return reply({
        status: 200,
        body: { forgotten: this.keys.forget(olderThanMs as number, takenSince as number | undefined) },
      });
    }
    const payload = parseJson(body.bytes);
    if (payload === undefined || payload === null || typeof payload !== 'object' || Array.isArray(payload))
      return reply(problem(400, 'Bad Request', 'The request body must be a JSON object.'));
    const invalid = this.apiNamed.get(endpoint!)!.refuse(payload as Record<string, unknown>);
    if (invalid !== undefined) return reply(problem(400, 'Bad Request', invalid));
    const key = this.idempotencyKey(req, this.keyless.has(endpoint!));
    if (!key.ok) return reply(problem(400, 'Bad Request', key.reason));
    if (key.key === undefined && this.options.requireKey === true && !this.keyless.has(endpoint!))
      return reply(problem(400, 'Bad Request', 'The Idempotency-Key header is required.'));
    const traceparent = req.headersDistinct.traceparent?.join(', ') ?? null;
    await this.serve(endpoint!, key.key, payload as Record<string, unknown>, traceparent, res, reply);
  }

  /** Past every rejection: the chaos gate, the key, then the effect. */
  private async serve(
    endpoint: ProviderEndpoint,
    key: string | undefined,
    payload: Record<string, unknown>,
    traceparent: string | null,
    res: http.ServerResponse,
    reply: (r: Reply | 'destroyed', note?: string) => void,
  ): Promise<void> {
    const note = ` key=${key ?? '-'}`;
    const counts = key === undefined ? undefined : this.countsOf(endpoint, key);
    if (counts !== undefined) counts.requests += 1;
    const fault = this.chaos.gate(endpoint, this.now());
    if (fault !== undefined) {
      if (counts !== undefined) counts.chaosRefused += 1;
      const why = ` ${fault.kind} (chaos)`;
      return reply(fault.kind === 'outage' && fault.mode === 'refused' ? 'destroyed' : gateReply(fault), note + why);
    }
    const keyed = key !== undefined && !this.keyless.has(endpoint);
    if (keyed) {
      const claim = this.keys.claim(endpoint, key, canonicalJson(payload), this.chaos.forgetOlderThanMs(endpoint));
      if (claim.kind === 'in-progress') {
        this.counters.inProgress += 1;
        counts!.inProgress += 1;
        counts!.absorbedAt = [...(counts!.absorbedAt ?? []), new Date(this.now()).toISOString()];
        return reply(
          problem(409, 'Conflict', `A request with Idempotency-Key ${key} is still in progress; retry later.`, {
            'Retry-After': '1',
          }),
          note,
        );
      }
      if (claim.kind === 'mismatch') {
        this.counters.payloadMismatch += 1;
        counts!.payloadMismatch += 1;
        return reply(
          problem(
            422,
            'Unprocessable Content',
            `Idempotency-Key ${key} was used with another payload; a retry must send the same body.`,
          ),
          note,
        );
      }
      if (claim.kind === 'replay') {
        this.counters.replayed += 1;
        counts!.replayed += 1;
        counts!.absorbedAt = [...(counts!.absorbedAt ?? []), new Date(this.now()).toISOString()];
        await this.wait(this.chaos.answerDelayMs(endpoint));
        return reply({ ...claim.response, headers: { 'Idempotent-Replayed': 'true' } }, `${note} replayed`);
      }
    }
    // Performed: the effect happens now, whatever becomes of the answer.
    const abandoned = watchAbandon(res);
    const effect = this.perform(endpoint, key ?? null, payload, traceparent);
    if (counts !== undefined) counts.performed += 1;
    const response = answerOf(this.apiNamed.get(endpoint)!, effect, payload);
    if (this.chaos.dropsAnswer(endpoint)) {
      if (keyed) this.keys.complete(endpoint, key, response);
      effect.answer = 'dropped';
      return reply('destroyed', `${note} performed, answer dropped (chaos)`);
    }
    await this.wait((this.options.latencyMs ?? 0) + this.chaos.answerDelayMs(endpoint));
    if (keyed) this.keys.complete(endpoint, key, response);
    if (abandoned() || this.stopped) {
      effect.answer = 'abandoned';
      this.counters.answersAbandoned += 1;
      this.options.log?.(
        `POST ${this.apiNamed.get(endpoint)!.route}${note} performed, the caller left before the answer`,
      );
      return;
    }
    effect.answer = 'sent';
    reply(response, `${note} performed`);
  }

  private perform(
    endpoint: ProviderEndpoint,
    key: string | null,
    payload: Record<string, unknown>,
    traceparent: string | null,
  ): PerformedEffect {
    const seq = this.performed.length + 1;
    const effect: PerformedEffect = {
      seq,
      endpoint,
      key,
      payload,
      performedAt: new Date(this.now()).toISOString(),
      id: `${this.apiNamed.get(endpoint)!.idPrefix}_${String(seq).padStart(6, '0')}`,
      answer: 'pending',
      traceparent,
    };
    this.performed.push(effect);
    this.counters.performed += 1;
    return effect;
  }

  private countsOf(endpoint: ProviderEndpoint, key: string): KeyRequestCounts {
    const byKey = this.perKey[endpoint];
    byKey[key] ??= { requests: 0, performed: 0, replayed: 0, inProgress: 0, payloadMismatch: 0, chaosRefused: 0 };
    return byKey[key];
  }

  /** 401 without a Bearer token, 403 with a wrong one. */
  private authorize(req: http.IncomingMessage): Reply | undefined {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (match === null)
      return problem(401, 'Unauthorized', 'Send the API key as Authorization: Bearer <key>.', {
        'WWW-Authenticate': 'Bearer realm="local-provider"',
      });
    const given = Buffer.from(match[1]);
    if (given.length !== this.apiKey.length || !timingSafeEqual(given, this.apiKey))
      return problem(403, 'Forbidden', 'The API key is not valid.');
    return undefined;
  }

  /**
   * The `Idempotency-Key`, parsed as our own API parses it; absent is allowed
   * (see `requireKey`). A keyless endpoint takes it as it comes, only to log it.
   */
  private idempotencyKey(
    req: http.IncomingMessage,
    keyless: boolean,
  ): { ok: true; key?: string } | { ok: false; reason: string } {
    const values = req.headersDistinct['idempotency-key'];
    if (values === undefined) return { ok: true };
    if (keyless) return { ok: true, key: values.join(', ').trim() };
    const parsed = parseIdempotencyKey(values);
    return parsed.ok ? { ok: true, key: parsed.key } : parsed;
  }

  private reject(status: number): void {
    this.counters.rejected[status] = (this.counters.rejected[status] ?? 0) + 1;
  }

  private wait(ms: number): Promise<void> {
    if (ms <= 0 || this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const wait = {
        timer: setTimeout(() => {
          this.waits.delete(wait);
          resolve();
        }, ms),
        resolve,
      };
      this.waits.add(wait);
    });
  }
}
