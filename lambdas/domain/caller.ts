/**
 * Who the caller is, for idempotency scope and order ownership: the
 * authenticated principal, never the session.
 *
 * A client's credentials rotate between a request and its retry (a new ECS
 * task, a Lambda cold start, a CLI session, a credential refresh), and every
 * rotation of role credentials gives a new session name. If the session were
 * the caller, a retry after a rotation would get a new key space: a second
 * order, stock reserved twice, points credited twice, and 404 for its own
 * first order. So the session name is dropped:
 *
 * - a Cognito identity (identity-pool credentials) is its identity id: the
 *   `userArn` of such a request is the pool role's assumed-role session, which
 *   every user of the pool shares, so the identity id must win;
 * - `arn:<partition>:sts::<acct>:assumed-role/<Role>/<session>` is the role,
 *   `arn:<partition>:sts::<acct>:assumed-role/<Role>` (assumed-role ARNs carry
 *   no role path, so none is kept);
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
 * space and see each other's orders. Give workloads that must be kept apart
 * roles of their own.
 */
export interface CallerIdentity {
  userArn?: string | null;
  cognitoIdentityId?: string | null;
}

// Partitions: aws, aws-cn, aws-us-gov, aws-iso, aws-iso-b, aws-eusc, ...
const PARTITION = 'aws(?:-[a-z]+)*';
const ACCOUNT = '\\d{12}';
// The characters IAM allows in user, role, session and federated-user names.
const NAME = '[\\w+=,.@-]';

const ASSUMED_ROLE = new RegExp(`^(arn:${PARTITION}:sts::${ACCOUNT}:assumed-role/${NAME}{1,64})/${NAME}{2,64}$`);
const IAM_USER = new RegExp(`^arn:${PARTITION}:iam::${ACCOUNT}:user/(?:[\\x21-\\x2e\\x30-\\x7e]+/)*${NAME}{1,64}$`);
const FEDERATED_USER = new RegExp(`^arn:${PARTITION}:sts::${ACCOUNT}:federated-user/${NAME}{2,32}$`);
const ROOT = new RegExp(`^arn:${PARTITION}:iam::${ACCOUNT}:root$`);
// Cognito identity ids: `<region>:<guid>`.
const COGNITO_IDENTITY_ID = /^[a-z]{2}(?:-[a-z]+)+-\d:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The principal that scopes keys and owns orders, or undefined when there is none to trust. */
export function callerPrincipal(identity: CallerIdentity): string | undefined {
  const cognitoId = identity.cognitoIdentityId;
  if (cognitoId !== undefined && cognitoId !== null && cognitoId !== '') {
    return COGNITO_IDENTITY_ID.test(cognitoId) ? cognitoId : undefined;
  }
  const arn = identity.userArn;
  if (arn === undefined || arn === null) return undefined;
  const role = ASSUMED_ROLE.exec(arn);
  if (role !== null) return role[1];
  if (IAM_USER.test(arn) || FEDERATED_USER.test(arn) || ROOT.test(arn)) return arn;
  return undefined;
}
