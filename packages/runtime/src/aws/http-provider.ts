import { PermanentError, RetryLater } from '../errors';
import type { ExternalProvider } from '../provider/provider';
import { inChildSpan } from '../trace/spans';
import { formatTraceparent } from '../trace/trace-context';

/**
 * Where the API key goes: `Authorization: Bearer <key>` unless the provider wants another header.
 *
 * @example
 * ```ts
 * new HttpProvider({ name: 'mail', endpoint, apiKey, apiKeyHeader: { name: 'X-Api-Key' } }); // the bare key in X-Api-Key
 * ```
 */
export interface ApiKeyHeader {
  /** The header's name, e.g. `Authorization` or `X-Api-Key`. */
  name: string;
  /** Put before the key with one space, e.g. `Bearer`; omitted: the bare key. */
  scheme?: string;
}

/**
 * How an HttpProvider reaches its provider.
 *
 * @example
 * ```ts
 * const options: HttpProviderOptions = { name: 'warehouse', endpoint: 'https://wms.example/v1', path: 'instructions', apiKey, timeoutMs: 5_000 };
 * ```
 */
export interface HttpProviderOptions {
  /** The provider's name (`mail`, `warehouse`), for the messages of the errors it throws. */
  name: string;
  /** The base URL, e.g. `https://api.mail.example/v1`. Its query string, if any, never appears in an error. */
  endpoint: string;
  /** Appended to `endpoint` with one `/` between them, e.g. `messages`; omitted: POST to `endpoint` itself. */
  path?: string;
  /**
   * The API key, or where to read it: called once per call, so the caller
   * decides where it comes from and how long it is cached (a Secrets Manager
   * read once per container, say). It is sent in a header only, never put in
   * an error.
   */
  apiKey: Promise<string> | (() => string | Promise<string>);
  /** Default `{ name: 'Authorization', scheme: 'Bearer' }`. */
  apiKeyHeader?: ApiKeyHeader;
  /**
   * Called on a 401: the key `apiKey` cached may have been rotated, so the next call must read it
   * afresh. With it a 401 is transient (retried after `inProgressRetrySeconds`, with the key read
   * again); without it a 401 is permanent, like any other 4xx.
   * @default none: a 401 is permanent
   */
  refreshApiKey?: () => void;
  /**
   * The longest one call may take, ms, however far off the record's deadline
   * is (the record's signal cuts it earlier). Default 10 000.
   */
  timeoutMs?: number;
  /** The most of a response body read (for an error's excerpt), bytes; the rest is never read. Default 64 KiB. */
  maxResponseBytes?: number;
  /** The backoff hint of a 409 (the provider still runs that key) that names no `Retry-After`, seconds. Default 5. */
  inProgressRetrySeconds?: number;
  /** The clock a `Retry-After` HTTP date is read against. */
  now?: () => Date;
}

/**
 * A transient failure of an HTTP provider that names no backoff: a 5xx (or a
 * 429 / 503 without a usable `Retry-After`), a timeout, a connection reset, a
 * DNS failure. The consumer retries the message with its own backoff; the call
 * stays owed on its inbox entry.
 *
 * @example
 * ```ts
 * try {
 *   await mail.send(key, payload, { signal: work.signal });
 * } catch (error) {
 *   if (error instanceof ProviderUnavailable && error.outcomeUnknown) logger.warn('the mail may have gone out; the retry carries the same key');
 *   throw error; // transient: the message is retried, the call stays owed
 * }
 * ```
 */
export class ProviderUnavailable extends Error {
  constructor(
    /** The provider's name. */
    readonly provider: string,
    message: string,
    /**
     * True when the provider may have applied the call (a timeout, a reset
     * after the request went out, a 5xx): the retry carries the same key, so a
     * provider that dedupes on it applies the effect once. False only when the
     * request cannot have reached it (connection refused, DNS failure).
     */
    readonly outcomeUnknown: boolean,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'ProviderUnavailable';
  }
}

export const DEFAULT_PROVIDER_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024;
const DEFAULT_IN_PROGRESS_RETRY_SECONDS = 5;
const EXCERPT_CHARS = 200;
/** Network failures in which the request never left this process: the provider cannot have applied it. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']);

/**
 * An ExternalProvider over HTTP, on the platform's `fetch`: one `POST` per
 * call of the JSON payload, with `Idempotency-Key: <the key>` (`providerKey` in inbox/keys.ts), the
 * order's W3C `traceparent` and the API key in headers. How the answer is classified:
 *
 * | answer | outcome |
 * | --- | --- |
 * | 2xx | done (the body is not read) |
 * | 409, the provider still runs that key | transient, RetryLater (`Retry-After`, else `inProgressRetrySeconds`) |
 * | 429, 503 | transient, RetryLater with `Retry-After` (seconds or HTTP date); without one ProviderUnavailable |
 * | 408, other 5xx | transient, ProviderUnavailable (RetryLater if a `Retry-After` came) |
 * | 422, same key with another payload (a bug on our side) | permanent, `ProviderRejected`: dead-lettered at once |
 * | other 4xx, 3xx (redirects are not followed) | permanent, `ProviderRejected` |
 * | timeout (`timeoutMs`), connection reset, DNS failure, refused | transient, ProviderUnavailable |
 * | the record's deadline (`options.signal`) | the signal's reason, as thrown (DeadlineExceeded) |
 *
 * A timeout, a reset or a 5xx is ambiguous: the provider may have applied the
 * call and only its answer was lost. That is what the key is for: the retry
 * carries the same key, and a provider that dedupes on it answers from its
 * record of the first call instead of applying it again (a 409 while the first
 * is still running). A provider that ignores the key would apply it twice.
 *
 * A permanent error names the status and a short excerpt of the body (at most
 * 200 characters of the first `maxResponseBytes` bytes, the API key redacted),
 * never a header. An abort by the record's deadline rethrows that signal's
 * reason, so the consumer fails the record as it fails any record past its
 * deadline (and the provider-call lease is left to lapse, the call's fate
 * being unknown).
 *
 * @example
 * ```ts
 * const mail = new HttpProvider({
 *   name: 'mail',
 *   endpoint: 'https://api.mail.example/v1',
 *   path: 'messages',
 *   apiKey: () => readSecretOncePerContainer('mail-api-key'),
 * });
 * // POST https://api.mail.example/v1/messages, Idempotency-Key: fulfilment:ord-1.placed
 * await mail.send('fulfilment:ord-1.placed', { orderId: 'ord-1', template: 'confirmation' }, { signal: work.signal });
 * ```
 */
export class HttpProvider implements ExternalProvider {
  private readonly url: string;
  private readonly timeoutMs: number;
  private readonly maxResponseBytes: number;
  private readonly inProgressRetrySeconds: number;
  private readonly apiKeyHeader: ApiKeyHeader;
  private readonly now: () => Date;

  constructor(private readonly options: HttpProviderOptions) {
    this.url =
      options.path === undefined
        ? options.endpoint
        : `${options.endpoint.replace(/\/+$/, '')}/${options.path.replace(/^\/+/, '')}`;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_PROVIDER_TIMEOUT_MS;
    this.maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    this.inProgressRetrySeconds = options.inProgressRetrySeconds ?? DEFAULT_IN_PROGRESS_RETRY_SECONDS;
    this.apiKeyHeader = options.apiKeyHeader ?? { name: 'Authorization', scheme: 'Bearer' };
    this.now = options.now ?? (() => new Date());
  }

  /**
   * POSTs `payload` under `idempotencyKey`; resolves once the provider answered
   * 2xx, throws as the class documents otherwise. `signal` (the record's
   * deadline) and the `timeoutMs` cap both cut the call. The call is a `provider-call` span, a
   * child of the active one (the consumer's), and its `traceparent` header names that span, so the
   * provider's own traces join the order's.
   */
  send(idempotencyKey: string, payload: Record<string, unknown>, options?: { signal?: AbortSignal }): Promise<void> {
    return inChildSpan(
      'provider-call',
      (span) => this.post(idempotencyKey, payload, formatTraceparent(span), options?.signal),
      { provider: this.options.name, idempotencyKey },
    );
  }

  private async post(
    idempotencyKey: string,
    payload: Record<string, unknown>,
    traceparent: string,
    deadline: AbortSignal | undefined,
  ): Promise<void> {
    if (deadline?.aborted) throw deadline.reason;
    const apiKey = await (typeof this.options.apiKey === 'function' ? this.options.apiKey() : this.options.apiKey);
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const signal = deadline === undefined ? timeout : AbortSignal.any([deadline, timeout]);
    const { name, scheme } = this.apiKeyHeader;

    let response: Response;
    try {
      response = await fetch(this.url, {
        method: 'POST',
        headers: {
          'Idempotency-Key': idempotencyKey,
          traceparent,
          'Content-Type': 'application/json',
          Accept: 'application/json',
          [name]: scheme === undefined ? apiKey : `${scheme} ${apiKey}`,
        },
        body: JSON.stringify(payload),
        redirect: 'manual',
        signal,
      });
    } catch (error) {
      throw this.callFailure(error, idempotencyKey, deadline, timeout);
    }

    if (response.status >= 200 && response.status < 300) {
      await response.body?.cancel().catch(() => undefined);
      return;
    }
    const excerpt = await readExcerpt(response, this.maxResponseBytes, apiKey).catch((error: unknown) => {
      if (deadline?.aborted) throw deadline.reason;
      return `(body unreadable: ${error instanceof Error ? error.name : 'error'})`;
    });
    throw this.statusFailure(response, idempotencyKey, excerpt);
  }

  /** The error for an answer that is not 2xx (see the class's table). */
  private statusFailure(response: Response, key: string, excerpt: string): Error {
    const { status } = response;
    const what = `${this.options.name} answered ${status} to ${key}${excerpt === '' ? '' : `: ${excerpt}`}`;
    if (status === 401 && this.options.refreshApiKey !== undefined) {
      // Refused before it acted: a rotated key. The next try reads the key again.
      this.options.refreshApiKey();
      return new RetryLater(this.inProgressRetrySeconds, `${what} (the API key is read again)`);
    }
    const transient = status === 408 || status === 409 || status === 429 || status >= 500;
    if (!transient) {
      const why =
        status === 422 ? ' (same key, another payload?)' : status < 400 ? ' (redirects are not followed)' : '';
      return new PermanentError('ProviderRejected', `${what}${why}`);
    }
    const hint =
      retryAfterSeconds(response.headers.get('retry-after'), this.now()) ??
      (status === 409 ? this.inProgressRetrySeconds : undefined);
    if (hint !== undefined) return new RetryLater(hint, `${what} (retry after ${hint} s)`);
    // A 5xx may come after the provider applied the call; a 408 or a 429 refused it before.
    return new ProviderUnavailable(this.options.name, what, status >= 500);
  }

  /** The error for a call that got no answer: the deadline's own reason, or a transient ProviderUnavailable. */
  private callFailure(error: unknown, key: string, deadline: AbortSignal | undefined, timeout: AbortSignal): unknown {
    if (deadline?.aborted) return deadline.reason;
    const where = `POST ${publicUrl(this.url)}`;
    if (timeout.aborted)
      return new ProviderUnavailable(
        this.options.name,
        `${this.options.name}: ${where} for ${key} got no answer within ${this.timeoutMs} ms (it may have been applied)`,
        true,
        { cause: error },
      );
    const code = networkCode(error);
    return new ProviderUnavailable(
      this.options.name,
      `${this.options.name}: ${where} for ${key} failed${code === undefined ? '' : ` (${code})`}`,
      code === undefined || !NOT_SENT_CODES.has(code),
      { cause: error },
    );
  }
}

/**
 * At most `maxBytes` of the body, then the stream is cancelled (the rest is
 * never read): whitespace collapsed, the API key redacted, cut to EXCERPT_CHARS.
 */
async function readExcerpt(response: Response, maxBytes: number, apiKey: string): Promise<string> {
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < maxBytes) {
      const { done, value } = await reader.read();
      if (done) break;
      const part = value.subarray(0, maxBytes - size);
      chunks.push(part);
      size += part.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  const text = new TextDecoder().decode(Buffer.concat(chunks));
  const printable = Array.from(text, (c) => (c < ' ' || c === '\u007f' ? ' ' : c)).join('');
  const clean = printable.replace(/\s+/g, ' ').trim();
  const redacted = apiKey === '' ? clean : clean.split(apiKey).join('[redacted]');
  return redacted.length > EXCERPT_CHARS ? `${redacted.slice(0, EXCERPT_CHARS)}…` : redacted;
}

/** `Retry-After` as seconds from `now`: delta-seconds or an HTTP date (a past date is 0); undefined if unreadable. */
function retryAfterSeconds(value: string | null, now: Date): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - now.getTime()) / 1000));
}

/** The system error code under fetch's `TypeError: fetch failed` (ECONNRESET, ENOTFOUND, UND_ERR_SOCKET ...). */
function networkCode(error: unknown): string | undefined {
  // Duck-typed, not `instanceof Error`: fetch's errors may come from another realm than this module's Error.
  let e = error as { code?: unknown; cause?: unknown } | null | undefined;
  for (let depth = 0; typeof e === 'object' && e !== null && depth < 5; depth++) {
    if (typeof e.code === 'string') return e.code;
    e = e.cause as typeof e;
  }
  return undefined;
}

/** The URL without its query string or credentials, for an error message. */
function publicUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}
