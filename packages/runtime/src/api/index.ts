/**
 * The idempotent HTTP API's parts (`exactly-once/api`): the Idempotency-Key header, the request
 * fingerprint, the caller rule and scope, and the responses (application/problem+json). The handler
 * factory itself, `idempotentCommand`, is in the root module.
 *
 * @example A read handler: derive the caller, answer 404 or the item
 * ```ts
 * import { callerOf, json, notFound, type HttpResponse } from '.';
 *
 * const caller = callerOf(event, CALLER_RULE);
 * return item === undefined ? notFound('No such order') : json(200, item);
 * ```
 */

export { MAX_IDEMPOTENCY_KEY_LENGTH, parseIdempotencyKey, type IdempotencyKeyResult } from './idempotency-key';
export { canonicalJson } from '../runtime/canonical-json';
export { type CommandInput, type IdempotentCommandOptions } from './idempotent-command';
export {
  callerPrincipal,
  callerRule,
  callerRuleFromEnv,
  CallerRuleError,
  DEFAULT_CALLER_RULE,
  DEFAULT_HUMAN_ROLE_PATTERNS,
  parseHumanRolePatterns,
  type CallerIdentity,
  type CallerRule,
} from './caller';
export {
  callerOf,
  DEFAULT_RETRY_ADVICE,
  FORBIDDEN,
  headerValues,
  internalError,
  json,
  notFound,
  problem,
  serviceUnavailable,
  unexpectedErrorResponse,
  type HttpResponse,
  type Problem,
} from './http';
export { inRequestSpan } from './request-trace';
