import { randomUUID } from 'node:crypto';
import * as http from 'node:http';
import type { InvocationResult } from '../host/execution-environment';
import type { FunctionHost } from '../host/function-host';
import type { RestApiDefinition, RouteDefinition } from '../template/api';
import { renderGatewayError, type GatewayError, type HttpReply } from './gateway-responses';
import { proxyEvent, sigV4Caller, type Caller } from './proxy-event';
import { Router, type RouteMatch } from './router';
import { verifySignature } from './verify-signature';

/** The port is taken: a user error, reported in one line. */
export class PortInUseError extends Error {
  constructor(port: number) {
    super(`Port ${port} is already in use: stop whatever uses it or set PORT to another port`);
    this.name = 'PortInUseError';
  }
}

export interface ApiServerOptions {
  api: RestApiDefinition;
  apiId: string;
  hostOf: (functionLogicalId: string) => FunctionHost;
  port: number;
  log: (line: string) => void;
  /** Local-only GET endpoints answered with JSON (e.g. `/__local/stats`); they exist on no deployed API. */
  localRoutes?: Record<string, (url: URL) => unknown>;
  /**
   * Check SigV4 signatures on AWS_IAM methods (default true): made with the
   * local secret (LOCAL_SECRET_ACCESS_KEY), over the request as sent, dated
   * within 5 minutes. Off, only the access key id is read, as the caller.
   */
  verifySignatures?: boolean;
  /** The clock the 5-minute window is measured on (epoch ms); tests move it. */
  now?: () => number;
}

/**
 * The Host names a browser sends only for this machine. Any other name
 * resolving to 127.0.0.1 may be DNS rebinding: a web page whose domain was
 * re-pointed at loopback, driving the local API from the user's browser.
 */
const LOOPBACK_HOST = /^(?:127\.0\.0\.1|localhost|\[::1\])(?::\d{1,5})?$/i;

export function isLoopbackHost(host: string | undefined): boolean {
  return host !== undefined && LOOPBACK_HOST.test(host);
}

/** API Gateway's payload limit. */
const MAX_BODY_BYTES = 10 * 1024 * 1024;

/**
 * Serves one REST API on loopback, as API Gateway would: routes from the
 * template, SigV4 required on AWS_IAM methods and checked as API Gateway checks
 * it (the local secret for every access key id, which names the caller; see
 * verifySignature), required request parameters
 * checked, REST v1 proxy events, the function's proxy response mapped back,
 * and gateway-made errors rendered from the template's gateway responses.
 * Paths work with or without the stage prefix (`/orders` and `/api/orders`).
 */
export class ApiServer {
  private readonly server: http.Server;
  private readonly router: Router;
  private readonly stage: string;

  constructor(private readonly options: ApiServerOptions) {
    this.router = new Router(options.api.routes);
    this.stage = options.api.stageName ?? 'prod';
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch((error: Error) => {
        options.log(`internal error: ${error.message}`);
        if (!res.headersSent)
          this.reply(
            res,
            this.gatewayError({ type: 'DEFAULT_5XX', status: 500, message: 'Internal server error' }, randomUUID()),
          );
      });
    });
    // Keep-alive sockets must not hold up stop().
    this.server.keepAliveTimeout = 5_000;
  }

  get url(): string {
    const address = this.server.address();
    const port = typeof address === 'object' && address !== null ? address.port : this.options.port;
    return `http://127.0.0.1:${port}`;
  }

  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', (error: NodeJS.ErrnoException) => {
        reject(error.code === 'EADDRINUSE' ? new PortInUseError(this.options.port) : error);
      });
      this.server.listen(this.options.port, '127.0.0.1', () => resolve());
    });
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const started = Date.now();
    const requestId = randomUUID();
    if (!isLoopbackHost(req.headers.host)) {
      // Refused before the body is read or any function runs: nothing happens on a foreign Host.
      this.reply(res, {
        status: 403,
        headers: { 'Content-Type': 'application/problem+json', Connection: 'close' },
        body: JSON.stringify({
          type: 'about:blank',
          title: 'Forbidden host',
          status: 403,
          detail: `Host ${JSON.stringify(req.headers.host ?? '')} is not loopback: the local API answers only 127.0.0.1, localhost and [::1]`,
        }),
      });
      req.resume();
      this.options.log(
        `${req.method ?? 'GET'} ${req.url ?? '/'} 403 (Host ${req.headers.host ?? 'missing'} is not loopback)`,
      );
      return;
    }
    const body = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = (req.method ?? 'GET').toUpperCase();
    const local = method === 'GET' ? this.options.localRoutes?.[url.pathname] : undefined;
    if (local !== undefined) {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(local(url)));
      return;
    }
    const reply = await this.respond(req, url, method, body, requestId);
    reply.headers['x-amzn-RequestId'] = requestId;
    this.reply(res, reply);
    this.options.log(
      `${method} ${url.pathname} ${reply.status} ${Date.now() - started}ms${this.unknownRouteHint(method, url)}`,
    );
  }

  /**
   * API Gateway answers an unknown path or method with 403 "Missing Authentication Token", which reads
   * like a signing problem. The answer stays API Gateway's; the runtime's log line says what it means.
   */
  private unknownRouteHint(method: string, url: URL): string {
    if (this.route(method, url.pathname).match !== undefined) return '';
    return ` (no route ${method} ${url.pathname}: API Gateway answers an unknown path or method with 403 "Missing Authentication Token"; the routes: ${this.options.api.routes.map((r) => `${r.httpMethod} ${r.resourcePath}`).join(', ')})`;
  }

  private async respond(
    req: http.IncomingMessage,
    url: URL,
    method: string,
    body: Buffer | 'too-large',
    requestId: string,
  ): Promise<HttpReply> {
    const { path, match } = this.route(method, url.pathname);
    if (match === undefined) {
      // With IAM auth, API Gateway answers an unknown resource or method like a missing signature.
      return this.gatewayError(
        { type: 'MISSING_AUTHENTICATION_TOKEN', status: 403, message: 'Missing Authentication Token' },
        requestId,
      );
    }
    if (body === 'too-large')
      return this.gatewayError({ type: 'REQUEST_TOO_LARGE', status: 413, message: 'Request Too Long' }, requestId);
    let caller = sigV4Caller(req.headers.authorization, url.searchParams);
    if (match.route.authorizationType === 'AWS_IAM' && this.options.verifySignatures !== false) {
      const checked = await verifySignature({
        method,
        rawPath: (req.url ?? '/').split('?')[0],
        query: url.searchParams,
        headers: req.headers,
        body,
        now: this.options.now?.() ?? Date.now(),
      });
      if ('type' in checked) return this.gatewayError(checked, requestId);
      caller = checked;
    }
    if (match.route.authorizationType === 'AWS_IAM' && caller === 'missing') {
      return this.gatewayError(
        { type: 'MISSING_AUTHENTICATION_TOKEN', status: 403, message: 'Missing Authentication Token' },
        requestId,
      );
    }
    if (match.route.authorizationType === 'AWS_IAM' && caller === 'malformed') {
      // An Authorization header that is not a SigV4 signature (`Bearer ...`, `Basic ...`, a bare algorithm):
      // API Gateway refuses it with 403 IncompleteSignatureException. No gateway response type names that
      // error (the types are GATEWAY_ERRORS in packages/cdk/src/iam-rest-api.ts), so API Gateway renders it with the
      // API's DEFAULT_4XX response, keeping the 403 unless DEFAULT_4XX sets a status of its own.
      const message =
        "Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' parameters (AWS4-HMAC-SHA256).";
      return this.gatewayError(
        { type: 'DEFAULT_4XX', status: 403, message, errorType: 'IncompleteSignatureException' },
        requestId,
      );
    }
    const missing = missingParameters(match.route, req, url, match);
    if (missing.length > 0) {
      const message = `Missing required request parameters: [${missing.join(', ')}]`;
      return this.gatewayError(
        { type: 'BAD_REQUEST_PARAMETERS', status: 400, message, validationErrorString: message },
        requestId,
      );
    }
    const event = proxyEvent({
      request: req,
      url,
      path,
      body,
      match,
      caller: typeof caller === 'object' ? (caller as Caller) : undefined,
      apiId: this.options.apiId,
      stage: this.stage,
      requestId,
      binaryMediaTypes: this.options.api.binaryMediaTypes,
    });
    const host = this.options.hostOf(match.route.functionLogicalId);
    const result = await withTimeout(host.invoke(event, 'throttle'), match.route.integrationTimeoutMs);
    if (result === 'timeout')
      return this.gatewayError(
        { type: 'INTEGRATION_TIMEOUT', status: 504, message: 'Endpoint request timed out' },
        requestId,
      );
    return this.proxyResponse(result, requestId);
  }

  /** The route for a path, trying it with the stage prefix removed too. */
  private route(method: string, pathname: string): { path: string; match?: RouteMatch } {
    const direct = this.router.match(method, pathname);
    if (direct.found !== undefined) return { path: pathname, match: direct.found };
    const prefix = `/${this.stage}`;
    if (pathname === prefix || pathname.startsWith(`${prefix}/`)) {
      const path = pathname.slice(prefix.length) || '/';
      return { path, match: this.router.match(method, path).found };
    }
    return { path: pathname };
  }

  private proxyResponse(result: InvocationResult, requestId: string): HttpReply {
    if (!result.ok) {
      // Function error, timeout, crash: API Gateway answers 502; a throttle, 500.
      const status = result.reason === 'throttle' ? 500 : 502;
      return this.gatewayError({ type: 'DEFAULT_5XX', status, message: 'Internal server error' }, requestId);
    }
    const payload = result.payload as {
      statusCode?: unknown;
      headers?: Record<string, unknown>;
      multiValueHeaders?: Record<string, unknown[]>;
      body?: unknown;
      isBase64Encoded?: boolean;
    } | null;
    if (
      payload === null ||
      typeof payload !== 'object' ||
      (typeof payload.statusCode !== 'number' && typeof payload.statusCode !== 'string')
    ) {
      this.options.log('Malformed Lambda proxy response');
      return this.gatewayError({ type: 'DEFAULT_5XX', status: 502, message: 'Internal server error' }, requestId);
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(payload.headers ?? {})) headers[name] = String(value);
    for (const [name, values] of Object.entries(payload.multiValueHeaders ?? {}))
      headers[name] = values.map(String).join(', ');
    const text = payload.body === undefined || payload.body === null ? '' : String(payload.body);
    return {
      status: Number(payload.statusCode),
      headers,
      body: payload.isBase64Encoded ? Buffer.from(text, 'base64').toString('latin1') : text,
      ...(payload.isBase64Encoded ? { binary: true } : {}),
    };
  }

  private gatewayError(error: GatewayError, requestId: string): HttpReply {
    return renderGatewayError(this.options.api.gatewayResponses, error, requestId);
  }

  private reply(res: http.ServerResponse, reply: HttpReply & { binary?: boolean }): void {
    const body = reply.binary ? Buffer.from(reply.body, 'latin1') : Buffer.from(reply.body, 'utf8');
    res.writeHead(reply.status, { ...reply.headers, 'Content-Length': String(body.length) });
    res.end(body);
  }
}

function readBody(req: http.IncomingMessage): Promise<Buffer | 'too-large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => resolve(size > MAX_BODY_BYTES ? 'too-large' : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** `method.request.header.X`, `.querystring.X`, `.path.X` marked required, checked when the method's validator says so. */
function missingParameters(route: RouteDefinition, req: http.IncomingMessage, url: URL, match: RouteMatch): string[] {
  if (!route.validatesParameters) return [];
  return route.requiredParameters
    .map((p) => /^method\.request\.(header|querystring|path)\.(.+)$/.exec(p))
    .filter((m): m is RegExpExecArray => m !== null)
    .filter(([, where, name]) => {
      if (where === 'header') return req.headers[name.toLowerCase()] === undefined;
      if (where === 'querystring') return !url.searchParams.has(name);
      return match.pathParameters[name] === undefined;
    })
    .map(([, , name]) => name);
}

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), ms)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
