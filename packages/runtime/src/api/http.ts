import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { isDependencyFailure } from '../aws/transient-errors';
import { logger } from '../runtime/observability';
import { callerPrincipal, DEFAULT_CALLER_RULE, type CallerRule } from './caller';

/**
 * HTTP helpers for API Gateway (REST, Lambda proxy) handlers of an idempotent API: problem+json
 * errors (RFC 9457), JSON responses, header lookup and the authenticated caller.
 *
 * @example
 * ```ts
 * const response: HttpResponse = json(201, { bookingId }, { Location: `/bookings/${bookingId}` });
 * ```
 */
export type HttpResponse = APIGatewayProxyResult & { headers: Record<string, string> };

/**
 * A JSON response.
 *
 * @example
 * ```ts
 * return json(200, { bookingId, status: 'CONFIRMED' });
 * ```
 */
export function json(statusCode: number, body: unknown, headers: Record<string, string> = {}): HttpResponse {
  return {
    statusCode,
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  };
}

/**
 * An RFC 9457 problem: `type` is derived from the status (`urn:problem-type:bad-request`, ...).
 *
 * @example
 * ```ts
 * const refused: Problem = { status: 400, title: 'Invalid booking', detail: 'Nothing was stored.', errors: [{ field: 'nights', message: 'Too big' }] };
 * ```
 */
export interface Problem {
  status: number;
  title: string;
  detail: string;
  errors?: { field: string; message: string }[];
}

const PROBLEM_TYPES: Record<number, string> = {
  400: 'bad-request',
  403: 'forbidden',
  404: 'not-found',
  409: 'request-in-progress',
  422: 'idempotency-key-reused',
  500: 'internal-error',
  503: 'service-unavailable',
};

/**
 * A problem+json response (RFC 9457), its `type` named by the status.
 *
 * @example
 * ```ts
 * return problem({ status: 400, title: 'Invalid request body', detail: 'nights must be 1 to 30.' });
 * ```
 */
export function problem(p: Problem, headers: Record<string, string> = {}): HttpResponse {
  const body = { type: `urn:problem-type:${PROBLEM_TYPES[p.status] ?? 'error'}`, ...p };
  return {
    statusCode: p.status,
    headers: { 'Content-Type': 'application/problem+json', ...headers },
    body: JSON.stringify(body),
  };
}

/**
 * Every value of a header, across both of API Gateway's header maps, case-insensitively:
 * two values mean the header came twice, which {@link parseIdempotencyKey} refuses.
 *
 * @example
 * ```ts
 * const key = parseIdempotencyKey(headerValues(event, 'Idempotency-Key'));
 * ```
 */
export function headerValues(event: APIGatewayProxyEvent, name: string): string[] | undefined {
  const wanted = name.toLowerCase();
  for (const [key, values] of Object.entries(event.multiValueHeaders ?? {})) {
    if (key.toLowerCase() === wanted && values !== undefined) return values;
  }
  for (const [key, value] of Object.entries(event.headers ?? {})) {
    if (key.toLowerCase() === wanted && value !== undefined) return [value];
  }
  return undefined;
}

/**
 * The authenticated principal (IAM auth): for a workload role the role, not
 * the session; for a role whose sessions are people (`rule`) the session (see
 * callerPrincipal). Idempotency keys and what they create are scoped to it, so two
 * callers never collide on a key and one caller's retry after a credential
 * rotation lands in the same key space.
 *
 * @example
 * ```ts
 * const caller = callerOf(event, rule);
 * if (caller === undefined) return FORBIDDEN;
 * ```
 */
export function callerOf(event: APIGatewayProxyEvent, rule: CallerRule = DEFAULT_CALLER_RULE): string | undefined {
  const identity = event.requestContext?.identity ?? {};
  const caller = callerPrincipal(identity, rule);
  if (caller === undefined) {
    logger.warn('No usable caller identity', {
      userArn: identity.userArn,
      cognitoIdentityId: identity.cognitoIdentityId,
    });
  }
  return caller;
}

/**
 * 403: the request carries no identity to scope keys and data to.
 *
 * @example
 * ```ts
 * if (callerOf(event, rule) === undefined) return FORBIDDEN;
 * ```
 */
export const FORBIDDEN = problem({
  status: 403,
  title: 'Forbidden',
  detail: 'The request carries no caller identity (an IAM user, a role, a federated user, root or a Cognito identity).',
});

/**
 * 404 with the given detail.
 *
 * @example
 * ```ts
 * return booking === undefined ? notFound(`No booking ${bookingId}.`) : json(200, booking);
 * ```
 */
export function notFound(detail: string): HttpResponse {
  return problem({ status: 404, title: 'Not Found', detail });
}

/**
 * What a 503 says by default about retrying; an API with more to say passes its own.
 *
 * @example
 * ```ts
 * const advice = `${DEFAULT_RETRY_ADVICE} A GET /bookings/{id} shows whether it was made.`;
 * ```
 */
export const DEFAULT_RETRY_ADVICE =
  'Retrying is safe: a POST with the same Idempotency-Key returns the first answer and never acts twice; ' +
  'a read can be repeated as is.';

/**
 * 503 with `Retry-After: 1`. It never says "nothing was written": the command may have committed while
 * its idempotency record could not be completed. What holds in every case is that a retry is safe.
 *
 * @example
 * ```ts
 * return serviceUnavailable('A POST /bookings with the same Idempotency-Key returns the same booking.');
 * ```
 */
export function serviceUnavailable(retryAdvice: string = DEFAULT_RETRY_ADVICE): HttpResponse {
  return problem(
    {
      status: 503,
      title: 'Service Unavailable',
      detail: `A dependency is unavailable or throttling, so the request may or may not have taken effect. ${retryAdvice}`,
    },
    { 'Retry-After': '1' },
  );
}

/**
 * 500 without details: a stack trace is for the log, not the caller.
 *
 * @example
 * ```ts
 * logger.error('Unexpected error', { error });
 * return internalError();
 * ```
 */
export function internalError(): HttpResponse {
  return problem({ status: 500, title: 'Internal Server Error', detail: 'An unexpected error occurred.' });
}

/**
 * Last-resort mapping for every API handler: 503 for a dependency (throttling, a conflict, an outage),
 * 500 for a bug, never a stack trace. Both are logged.
 *
 * @example
 * ```ts
 * try {
 *   return json(200, await getBooking(id));
 * } catch (error) {
 *   return unexpectedErrorResponse(error);
 * }
 * ```
 */
export function unexpectedErrorResponse(error: unknown, retryAdvice: string = DEFAULT_RETRY_ADVICE): HttpResponse {
  if (isDependencyFailure(error)) {
    logger.warn('Dependency failure', { error });
    return serviceUnavailable(retryAdvice);
  }
  logger.error('Unexpected error', { error });
  return internalError();
}
