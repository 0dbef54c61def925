import { createHash } from 'node:crypto';
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import type { BasePersistenceLayer } from '@aws-lambda-powertools/idempotency/persistence';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { flushMetrics, logger } from '../runtime/observability';
import { DEFAULT_CALLER_RULE, type CallerRule } from './caller';
import { canonicalJson } from '../runtime/canonical-json';
import { callerOf, FORBIDDEN, headerValues, problem, unexpectedErrorResponse, type HttpResponse } from './http';
import { parseIdempotencyKey } from './idempotency-key';
import { inRequestSpan } from './request-trace';

/**
 * A parsed body, or each field that failed validation and what is wrong with it (the 400's `errors`).
 *
 * @example
 * ```ts
 * function parseBookingBody(body: string | null | undefined): BodyResult<BookingRequest> {
 *   const parsed = bookingRequestSchema.safeParse(JSON.parse(body ?? 'null'));
 *   return parsed.success
 *     ? { ok: true, value: parsed.data }
 *     : { ok: false, errors: parsed.error.issues.map((i) => ({ field: i.path.join('.'), message: i.message })) };
 * }
 * ```
 */
export type BodyResult<Request> =
  { ok: true; value: Request } | { ok: false; errors: { field: string; message: string }[] };

/**
 * What the command runs with, once per (caller, key): the first request's, replayed after.
 *
 * @example
 * ```ts
 * run: async ({ caller, idempotencyKey, fingerprint, request }: CommandInput<BookingRequest>) =>
 *   json(201, await bookings.confirm(deriveBookingId(caller, idempotencyKey), request, fingerprint)),
 * ```
 */
export interface CommandInput<Request> {
  /** The caller the key is scoped to (the principal, not the session: see `callerOf`). */
  caller: string;
  idempotencyKey: string;
  /**
   * The request's fingerprint (SHA-256 of the route and the canonical body). Store it with what the
   * command writes: a retry that finds the write done but its record gone compares it, and a differing
   * one is the key reused (see `isKeyReused`).
   */
  fingerprint: string;
  request: Request;
}

/**
 * One idempotent POST: what differs from one command to the next. Everything else (the order of
 * checks, the scope, the fingerprint, Powertools' record, the 409, 422 and 503 answers) is
 * {@link idempotentCommand}'s.
 *
 * @example An orders API's POST /orders
 * ```ts
 * const options: IdempotentCommandOptions<PlaceOrderRequest> = {
 *   route: 'POST /orders',
 *   keyPrefix: 'create-order',
 *   parseBody: parsePlaceOrderBody,
 *   run: async (input) => json(201, await placeOrder(orders, { ...input, now: new Date() })),
 *   persistenceStore: idempotencyStore(table),
 *   keyExpirySeconds: 86_400,
 *   isKeyReused: (error) => error instanceof IdempotencyKeyReusedError,
 * };
 * ```
 */
export interface IdempotentCommandOptions<Request> {
  /** `POST /bookings`: part of the fingerprint, so the same body on two routes is two requests. */
  route: string;
  /** Powertools' key prefix for the idempotency records (one per command). */
  keyPrefix: string;
  /** Parses and validates the raw body, never throwing. */
  parseBody(body: string | null | undefined): BodyResult<Request>;
  /** The 400's title when the body is refused. @default 'Invalid request body' */
  invalidBodyTitle?: string;
  /**
   * The command, run at most once per (caller, key) while the key's record lives: its answer is stored
   * and served again, with `Idempotent-Replayed: true`, to a retry with the same key and body.
   */
  run(input: CommandInput<Request>): Promise<HttpResponse>;
  /** Powertools' persistence layer for the records: one per command (one per idempotency config). */
  persistenceStore: BasePersistenceLayer;
  /** How long a key is remembered (the API's contract: 24 h). */
  keyExpirySeconds: number;
  /** Which role sessions are people. @default DEFAULT_CALLER_RULE (IAM Identity Center only) */
  callerRule?: CallerRule;
  /**
   * Whether an error of `run` means the key was used before with another body, found by the command
   * itself (its record was gone, but the entity the key made differs): then 422 like Powertools' own.
   * @default none
   */
  isKeyReused?(error: unknown): boolean;
  /** The answer to any other error. @default unexpectedErrorResponse (503 for a dependency, 500 for a bug) */
  errorResponse?(error: unknown): HttpResponse;
  /** Called when a stored answer is served again (e.g. to count replays). */
  onReplay?(): void;
}

/**
 * An idempotent POST handler (API Gateway REST, Lambda proxy) on Powertools' idempotency utility,
 * the HTTP contract of the Idempotency-Key draft and Stripe: in this order, so a refused request stores
 * nothing and a corrected one with the same key is accepted,
 * 1. the caller (403 without one), 2. the `Idempotency-Key` header (400), 3. the body (400 with its
 * field errors); then, scoped to (caller, key) and fingerprinted on the route and the canonical body,
 * 4. the command, once: a retry gets the stored answer (`Idempotent-Replayed: true`), a retry while
 * the first still runs 409 with `Retry-After: 1`, the same key with another body 422, and a dependency
 * failure 503 (a retry is safe).
 *
 * Make the command's own write idempotent too (an id derived from caller and key, a conditional put):
 * the record can be lost or its lock expire, and then only the write stops a second effect.
 *
 * @example In an entry module's factory (its deployed binding gives it `partsFromEnv()`, read at cold start)
 * ```ts
 * export function makeHandler(parts: Parts) {
 *   return idempotentCommand({
 *     route: 'POST /bookings',
 *     keyPrefix: 'create-booking',
 *     parseBody: parseBookingBody,
 *     run: async ({ caller, idempotencyKey, request }) => {
 *       const booking = await parts.bookings.confirm(deriveBookingId(caller, idempotencyKey), caller, request);
 *       return json(201, booking, { Location: `/bookings/${booking.bookingId}` });
 *     },
 *     persistenceStore: parts.idempotencyStore,
 *     keyExpirySeconds: parts.keyExpirySeconds,
 *   });
 * }
 * ```
 */
export function idempotentCommand<Request>(
  options: IdempotentCommandOptions<Request>,
): (event: APIGatewayProxyEvent, context: Context) => Promise<HttpResponse> {
  const config = new IdempotencyConfig({
    eventKeyJmesPath: 'scope',
    payloadValidationJmesPath: 'fingerprint',
    expiresAfterSeconds: options.keyExpirySeconds,
    // A stored success served again: same status and body, plus the replay header.
    responseHook: (response) => {
      options.onReplay?.();
      const stored = response as unknown as HttpResponse;
      return { ...stored, headers: { ...stored.headers, 'Idempotent-Replayed': 'true' } };
    },
  });
  const once = makeIdempotent(
    async (input: CommandInput<Request> & { scope: string }): Promise<HttpResponse> =>
      options.run({
        caller: input.caller,
        idempotencyKey: input.idempotencyKey,
        fingerprint: input.fingerprint,
        request: input.request,
      }),
    { persistenceStore: options.persistenceStore, config, keyPrefix: options.keyPrefix },
  );
  const callerRule = options.callerRule ?? DEFAULT_CALLER_RULE;
  const errorResponse = options.errorResponse ?? ((error: unknown) => unexpectedErrorResponse(error));

  const handle = async (event: APIGatewayProxyEvent): Promise<HttpResponse> => {
    const caller = callerOf(event, callerRule);
    if (caller === undefined) return FORBIDDEN;
    const key = parseIdempotencyKey(headerValues(event, 'Idempotency-Key'));
    if (!key.ok) return problem({ status: 400, title: 'Invalid Idempotency-Key', detail: key.reason });
    const body = options.parseBody(event.body);
    if (!body.ok)
      return problem({
        status: 400,
        title: options.invalidBodyTitle ?? 'Invalid request body',
        detail: 'The request body failed validation; nothing was stored.',
        errors: body.errors,
      });
    const fingerprint = createHash('sha256')
      .update(canonicalJson({ route: options.route, body: body.value }))
      .digest('hex');
    // Frozen: Powertools hashes the input again on completion, so nothing may change it in between.
    const input = deepFreeze({
      // The caller is part of the key: the same key from two callers is two requests.
      scope: `${caller}\n${key.key}`,
      fingerprint,
      caller,
      idempotencyKey: key.key,
      request: body.value,
    });
    try {
      return await once(input);
    } catch (error) {
      return mapError(error);
    }
  };

  const mapError = (error: unknown): HttpResponse => {
    const name = error instanceof Error ? error.name : '';
    if (name === 'IdempotencyValidationError' || options.isKeyReused?.(error) === true)
      return problem({
        status: 422,
        title: 'Idempotency-Key reused',
        detail: 'This Idempotency-Key was already used with a different request payload.',
      });
    if (name === 'IdempotencyAlreadyInProgressError')
      return problem(
        {
          status: 409,
          title: 'Request in progress',
          detail: 'A request with this Idempotency-Key is still being processed.',
        },
        { 'Retry-After': '1' },
      );
    return errorResponse(error);
  };

  return async (event, context) => {
    logger.addContext(context);
    // Without the context the in-progress lock never expires after a crash.
    config.registerLambdaContext(context);
    try {
      return await inRequestSpan(event, options.route, () => handle(event));
    } finally {
      flushMetrics();
    }
  };
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
