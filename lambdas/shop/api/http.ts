import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { isDependencyFailure, logger } from '../../exactly-once';
import { callerPrincipal, DEFAULT_CALLER_RULE, type CallerRule } from '../domain/caller';

/**
 * HTTP helpers shared by the API handlers: problem+json errors (RFC 9457),
 * JSON responses, header lookup and the authenticated caller.
 */
export type HttpResponse = APIGatewayProxyResult & { headers: Record<string, string> };

export function json(statusCode: number, body: unknown, headers: Record<string, string> = {}): HttpResponse {
  return {
    statusCode,
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  };
}

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

export function problem(p: Problem, headers: Record<string, string> = {}): HttpResponse {
  const body = { type: `urn:problem-type:${PROBLEM_TYPES[p.status] ?? 'error'}`, ...p };
  return {
    statusCode: p.status,
    headers: { 'Content-Type': 'application/problem+json', ...headers },
    body: JSON.stringify(body),
  };
}

/** Every value of a header, across both of API Gateway's header maps, case-insensitively. */
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
 * callerPrincipal). Idempotency keys and orders are scoped to it, so two
 * callers never collide on a key and one caller's retry after a credential
 * rotation lands in the same key space.
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

export const FORBIDDEN = problem({
  status: 403,
  title: 'Forbidden',
  detail: 'The request carries no caller identity (an IAM user, a role, a federated user, root or a Cognito identity).',
});

export function notFound(detail: string): HttpResponse {
  return problem({ status: 404, title: 'Not Found', detail });
}

export function serviceUnavailable(): HttpResponse {
  // No "nothing was written" here: the order may have committed while its
  // idempotency record could not be completed. What holds in every case is
  // that a retry is safe.
  return problem(
    {
      status: 503,
      title: 'Service Unavailable',
      detail:
        'A dependency is unavailable or throttling, so the request may or may not have taken effect. Retrying is safe: ' +
        'a POST /orders with the same Idempotency-Key returns the same order and never places a second one; ' +
        'a cancel or a read can be repeated as is.',
    },
    { 'Retry-After': '1' },
  );
}

export function internalError(): HttpResponse {
  return problem({ status: 500, title: 'Internal Server Error', detail: 'An unexpected error occurred.' });
}

/** Last-resort mapping for every API handler: 503 for a dependency, 500 for a bug, never a stack trace. */
export function unexpectedErrorResponse(error: unknown): HttpResponse {
  if (isDependencyFailure(error)) {
    logger.warn('Dependency failure', { error });
    return serviceUnavailable();
  }
  logger.error('Unexpected error', { error });
  return internalError();
}
