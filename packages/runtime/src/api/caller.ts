import { optionalEnv } from '../config';
import { ENV } from '../env-names';

/**
 * Who the caller is, for idempotency scope and ownership of what a request creates: the
 * authenticated principal, and for a role session the role, unless the role's
 * sessions are people.
 *
 * A workload's credentials rotate between a request and its retry (a new ECS
 * task, a Lambda cold start, a CI job, a credential refresh), and every
 * rotation of role credentials gives a new session name. If that session were
 * the caller, a retry after a rotation would get a new key space: the command
 * done twice (in an order system: a second order, stock reserved twice, points
 * credited twice), and 404 for what it created. So a workload's session name
 * is dropped.
 *
 * A person's session is different: every user of one IAM Identity Center
 * permission set, or of one SAML-federated role, assumes the same role, and
 * collapsing to the role would make them all one caller, sharing idempotency
 * keys and reading and changing each other's data. For those roles the
 * session name is the person (Identity Center sets it to the user name; a SAML
 * IdP sets it from the assertion's `RoleSessionName`), the same on every
 * credential refresh, and not chosen by the client. Which roles those are is
 * the {@link CallerRule}: role-name patterns whose sessions are people. Name a
 * role there only when nobody can choose its session names: with plain
 * AssumeRole, or AssumeRoleWithWebIdentity (OIDC), the client passes the
 * session name itself, so one user could name another's session and read that
 * person's data, unless only your own broker, which sets the verified user
 * as the session name, can assume the role.
 *
 * - a Cognito identity (identity-pool credentials) is its identity id: the
 *   `userArn` of such a request is the pool role's assumed-role session, which
 *   every user of the pool shares, so the identity id must win;
 * - `arn:<partition>:sts::<acct>:assumed-role/<Role>/<session>` of a role the
 *   rule names as people is that session ARN as is: the person;
 * - of any other role it is the role, `arn:<partition>:sts::<acct>:assumed-role/<Role>`
 *   (assumed-role ARNs carry no role path, so none is kept);
 * - an IAM user `arn:<partition>:iam::<acct>:user/<path/><name>` is its ARN;
 * - a federated user `arn:<partition>:sts::<acct>:federated-user/<name>` is its
 *   ARN as is: GetFederationToken has no role behind it, and the name is the one
 *   the broker chose for the end user, the only stable part of the identity;
 * - the account root `arn:<partition>:iam::<acct>:root` is its ARN: it is one
 *   principal whatever its credentials.
 *
 * Anything else (missing, another shape, characters IAM does not allow) is no
 * caller: the handler answers 403 rather than guess a scope.
 *
 * Consequence, by design: two workloads that share one role share one key
 * space and see each other's data. Give workloads that must be kept apart
 * roles of their own.
 *
 * The fields are those of API Gateway's `requestContext.identity` (IAM auth).
 *
 * @example
 * ```ts
 * const identity: CallerIdentity = event.requestContext.identity;
 * const caller = callerPrincipal(identity, rule); // undefined: answer 403
 * ```
 */
export interface CallerIdentity {
  userArn?: string | null;
  cognitoIdentityId?: string | null;
}

/**
 * Which role sessions are people. Build it with {@link callerRule}, which
 * validates the patterns; a role matches when its name matches one pattern.
 *
 * @example
 * ```ts
 * const rule = callerRule(['AWSReservedSSO_*', 'SupportDesk']);
 * rule.isHumanRole('SupportDesk'); // true
 * ```
 */
export interface CallerRule {
  /** The patterns as given, e.g. `AWSReservedSSO_*`. */
  readonly humanRolePatterns: readonly string[];
  /** Whether sessions of the role named `roleName` are people. */
  readonly isHumanRole: (roleName: string) => boolean;
}

/**
 * The default: IAM Identity Center permission sets only. Their roles are named
 * by AWS (`AWSReservedSSO_<PermissionSet>_<hex>`), trust only Identity Center's
 * SAML provider, and get the user name as session name, so every account has
 * the same, safe pattern. SAML or OIDC roles have names of the account's own
 * choosing, so they can only be configured per stage (`-c humanRolePatterns=...`).
 *
 * @example
 * ```ts
 * const rule = callerRule([...DEFAULT_HUMAN_ROLE_PATTERNS, 'Okta-*']);
 * ```
 */
export const DEFAULT_HUMAN_ROLE_PATTERNS: readonly string[] = Object.freeze(['AWSReservedSSO_*']);

/**
 * A pattern the rule cannot take, with the reason; a stack turns it into a one-line synth error.
 *
 * @example
 * ```ts
 * try {
 *   callerRule(['*']);
 * } catch (error) {
 *   if (error instanceof CallerRuleError) throw new Error(`-c humanRolePatterns: ${error.message}`);
 * }
 * ```
 */
export class CallerRuleError extends Error {
  override readonly name = 'CallerRuleError';
}

// Partitions: aws, aws-cn, aws-us-gov, aws-iso, aws-iso-b, aws-eusc, ...
const PARTITION = 'aws(?:-[a-z]+)*';
const ACCOUNT = '\\d{12}';
// The characters IAM allows in user, role, session and federated-user names.
const NAME = '[\\w+=,.@-]';

const ASSUMED_ROLE = new RegExp(`^(arn:${PARTITION}:sts::${ACCOUNT}:assumed-role/(${NAME}{1,64}))/${NAME}{2,64}$`);
const IAM_USER = new RegExp(`^arn:${PARTITION}:iam::${ACCOUNT}:user/(?:[\\x21-\\x2e\\x30-\\x7e]+/)*${NAME}{1,64}$`);
const FEDERATED_USER = new RegExp(`^arn:${PARTITION}:sts::${ACCOUNT}:federated-user/${NAME}{2,32}$`);
const ROOT = new RegExp(`^arn:${PARTITION}:iam::${ACCOUNT}:root$`);
// Cognito identity ids: `<region>:<guid>`.
const COGNITO_IDENTITY_ID = /^[a-z]{2}(?:-[a-z]+)+-\d:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

// A pattern: a role name's characters and `*` (any run of them), at most a role name long.
// A comma is excluded although IAM allows it in role names: it separates patterns in a list.
const PATTERN = /^[\w+=.@*-]{1,64}$/;

/**
 * The rule for these role-name patterns (glob: `*` matches any run of
 * characters, nothing else is special; matched case-insensitively, as IAM
 * treats role names). Throws a {@link CallerRuleError} for an empty list, an
 * empty pattern, a character IAM does not allow in a role name (or a comma),
 * a pattern longer than a role name, or a pattern of only `*`: that would make
 * every workload's sessions people, and a workload's retry after a credential
 * rotation the command done twice.
 *
 * @example
 * ```ts
 * const rule = callerRule(parseHumanRolePatterns(process.env.HUMAN_ROLE_PATTERNS ?? 'AWSReservedSSO_*'));
 * ```
 */
export function callerRule(patterns: readonly string[]): CallerRule {
  if (patterns.length === 0) throw new CallerRuleError('no role-name pattern given');
  const matchers = patterns.map((pattern) => {
    if (pattern === '') throw new CallerRuleError('an empty role-name pattern');
    if (!PATTERN.test(pattern)) {
      throw new CallerRuleError(
        `role-name pattern ${JSON.stringify(pattern)}: up to 64 of A-Z a-z 0-9 + = . @ _ - and *` +
          ' (IAM role-name characters; match a comma with *)',
      );
    }
    if (/^\*+$/.test(pattern)) {
      throw new CallerRuleError(
        `role-name pattern ${JSON.stringify(pattern)} matches every role: workload sessions would become callers of their own`,
      );
    }
    const body = pattern.split('*').map(escapeRegExp).join(`${NAME}*`);
    return new RegExp(`^${body}$`, 'i');
  });
  return Object.freeze({
    humanRolePatterns: Object.freeze([...patterns]),
    isHumanRole: (roleName: string) => matchers.some((m) => m.test(roleName)),
  });
}

/**
 * A comma-separated list of patterns (the form of `-c humanRolePatterns=` and of the environment variable).
 *
 * @example
 * ```ts
 * parseHumanRolePatterns('AWSReservedSSO_*, SupportDesk'); // ['AWSReservedSSO_*', 'SupportDesk']
 * ```
 */
export function parseHumanRolePatterns(list: string): string[] {
  return list.split(',').map((p) => p.trim());
}

/**
 * The rule of {@link DEFAULT_HUMAN_ROLE_PATTERNS}: what a handler uses when it is given none.
 *
 * @example
 * ```ts
 * const caller = callerOf(event, options.callerRule ?? DEFAULT_CALLER_RULE);
 * ```
 */
export const DEFAULT_CALLER_RULE: CallerRule = callerRule(DEFAULT_HUMAN_ROLE_PATTERNS);

/**
 * The principal that scopes keys and owns what it creates, or undefined when there is none to trust.
 *
 * @example
 * ```ts
 * callerPrincipal({ userArn: 'arn:aws:sts::123456789012:assumed-role/Checkout/i-0abc' }, DEFAULT_CALLER_RULE);
 * // 'arn:aws:sts::123456789012:assumed-role/Checkout'
 * ```
 */
export function callerPrincipal(identity: CallerIdentity, rule: CallerRule): string | undefined {
  const cognitoId = identity.cognitoIdentityId;
  if (cognitoId !== undefined && cognitoId !== null && cognitoId !== '') {
    return COGNITO_IDENTITY_ID.test(cognitoId) ? cognitoId : undefined;
  }
  const arn = identity.userArn;
  if (arn === undefined || arn === null) return undefined;
  const session = ASSUMED_ROLE.exec(arn);
  if (session !== null) return rule.isHumanRole(session[2]) ? arn : session[1];
  if (IAM_USER.test(arn) || FEDERATED_USER.test(arn) || ROOT.test(arn)) return arn;
  return undefined;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The caller rule an API function's stack gave it in {@link ENV.humanRolePatterns} (comma-separated
 * role-name patterns), read once, at cold start; unset or empty, the default
 * ({@link DEFAULT_HUMAN_ROLE_PATTERNS}). A bad list throws there, naming the variable, so a function
 * never serves a request under a rule nobody configured (synth refuses the stage's list first).
 *
 * @example In an API function's `partsFromEnv()`, which its deployed binding calls once, at cold start
 * ```ts
 * export function partsFromEnv(): Parts {
 *   return { ..., callerRule: callerRuleFromEnv() };
 * }
 * ```
 */
export function callerRuleFromEnv(): CallerRule {
  const list = optionalEnv(ENV.humanRolePatterns, DEFAULT_HUMAN_ROLE_PATTERNS.join(','));
  try {
    return callerRule(parseHumanRolePatterns(list));
  } catch (error) {
    if (error instanceof CallerRuleError)
      throw new Error(`Environment variable ${ENV.humanRolePatterns}: ${error.message}`);
    throw error;
  }
}
