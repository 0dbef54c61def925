import { callerPrincipal } from '../../lambdas/domain/caller';

/**
 * The caller is the principal, not the session: every session of a role is
 * one caller, so a retry after a credential rotation stays in its key space.
 * ARN shapes as API Gateway puts them in requestContext.identity.userArn.
 */
const COGNITO_ID = 'us-east-1:3f2a1b4c-5d6e-4f70-8a9b-0c1d2e3f4a5b';

describe('assumed-role sessions map to their role', () => {
  test.each([
    [
      'aws',
      'arn:aws:sts::123456789012:assumed-role/OrderWriter/i-0abc123def4567890',
      'arn:aws:sts::123456789012:assumed-role/OrderWriter',
    ],
    [
      'aws-cn',
      'arn:aws-cn:sts::210987654321:assumed-role/OrderWriter/ecs-task-1',
      'arn:aws-cn:sts::210987654321:assumed-role/OrderWriter',
    ],
    [
      'aws-us-gov',
      'arn:aws-us-gov:sts::123456789012:assumed-role/OrderWriter/botocore-session-1700000000',
      'arn:aws-us-gov:sts::123456789012:assumed-role/OrderWriter',
    ],
    [
      'a role name with every allowed punctuation mark',
      'arn:aws:sts::123456789012:assumed-role/Order_Writer+v2=x,y.z@team-1/s1',
      'arn:aws:sts::123456789012:assumed-role/Order_Writer+v2=x,y.z@team-1',
    ],
    [
      'an SSO role and an e-mail session name',
      'arn:aws:sts::123456789012:assumed-role/AWSReservedSSO_AdministratorAccess_0123456789abcdef/jane.doe@example.com',
      'arn:aws:sts::123456789012:assumed-role/AWSReservedSSO_AdministratorAccess_0123456789abcdef',
    ],
    [
      'a session name with @ = , . -',
      'arn:aws:sts::123456789012:assumed-role/OrderWriter/a@b=c,d.e-f',
      'arn:aws:sts::123456789012:assumed-role/OrderWriter',
    ],
  ])('%s', (_name, userArn, principal) => {
    expect(callerPrincipal({ userArn })).toBe(principal);
  });

  test('two sessions of one role are one caller; two roles are two', () => {
    const session = (role: string, name: string) => `arn:aws:sts::123456789012:assumed-role/${role}/${name}`;

    const before = callerPrincipal({ userArn: session('OrderWriter', 'ecs-task-a') });
    const afterRotation = callerPrincipal({ userArn: session('OrderWriter', 'ecs-task-b') });
    const otherRole = callerPrincipal({ userArn: session('OrderReader', 'ecs-task-a') });

    expect(afterRotation).toBe(before);
    expect(otherRole).not.toBe(before);
  });

  test('the same role name in two accounts or partitions is two callers', () => {
    const a = callerPrincipal({ userArn: 'arn:aws:sts::111111111111:assumed-role/OrderWriter/s1' });
    const b = callerPrincipal({ userArn: 'arn:aws:sts::222222222222:assumed-role/OrderWriter/s1' });
    const c = callerPrincipal({ userArn: 'arn:aws-cn:sts::111111111111:assumed-role/OrderWriter/s1' });

    expect(new Set([a, b, c]).size).toBe(3);
  });
});

describe('other principals keep their ARN', () => {
  test.each([
    ['an IAM user', 'arn:aws:iam::123456789012:user/alice'],
    ['an IAM user with a path', 'arn:aws:iam::123456789012:user/division_abc/subdivision_xyz/alice'],
    ['an IAM user with punctuation, aws-us-gov', 'arn:aws-us-gov:iam::123456789012:user/svc+orders=1,a.b@c-d'],
    ['a federated user (GetFederationToken)', 'arn:aws:sts::123456789012:federated-user/jane@example.com'],
    ['the account root', 'arn:aws:iam::123456789012:root'],
    ['the account root, aws-cn', 'arn:aws-cn:iam::123456789012:root'],
  ])('%s', (_name, userArn) => {
    expect(callerPrincipal({ userArn })).toBe(userArn);
  });
});

describe('a Cognito identity is its identity id', () => {
  test("it wins over the userArn, which is the pool role's session that every pool user shares", () => {
    const userArn = 'arn:aws:sts::123456789012:assumed-role/Cognito_PoolAuth_Role/CognitoIdentityCredentials';

    expect(callerPrincipal({ userArn, cognitoIdentityId: COGNITO_ID })).toBe(COGNITO_ID);
  });

  test('two identities of one pool are two callers', () => {
    const userArn = 'arn:aws:sts::123456789012:assumed-role/Cognito_PoolAuth_Role/CognitoIdentityCredentials';
    const other = 'us-gov-west-1:00000000-1111-4222-8333-444444444444';

    expect(callerPrincipal({ userArn, cognitoIdentityId: other })).toBe(other);
    expect(callerPrincipal({ userArn, cognitoIdentityId: other })).not.toBe(COGNITO_ID);
  });

  test('an empty identity id is absent (API Gateway sends null or ""), so the userArn decides', () => {
    expect(callerPrincipal({ userArn: 'arn:aws:iam::123456789012:user/alice', cognitoIdentityId: '' })).toBe(
      'arn:aws:iam::123456789012:user/alice',
    );
    expect(callerPrincipal({ userArn: 'arn:aws:iam::123456789012:user/alice', cognitoIdentityId: null })).toBe(
      'arn:aws:iam::123456789012:user/alice',
    );
  });
});

describe('no usable identity is no caller (the handlers answer 403)', () => {
  test.each([
    ['no identity at all', {}],
    ['a null userArn', { userArn: null }],
    ['an empty userArn', { userArn: '' }],
    ['a bare access key id', { userArn: 'AKIAIOSFODNN7EXAMPLE' }],
    ['an assumed role without a session', { userArn: 'arn:aws:sts::123456789012:assumed-role/OrderWriter' }],
    ['an assumed role with an empty session', { userArn: 'arn:aws:sts::123456789012:assumed-role/OrderWriter/' }],
    ['an assumed role with a path-like extra part', { userArn: 'arn:aws:sts::123456789012:assumed-role/a/b/c' }],
    ['a session name with a space', { userArn: 'arn:aws:sts::123456789012:assumed-role/OrderWriter/bad name' }],
    ['an 11-digit account', { userArn: 'arn:aws:sts::12345678901:assumed-role/OrderWriter/s1' }],
    ['an unknown partition', { userArn: 'arn:gcp:sts::123456789012:assumed-role/OrderWriter/s1' }],
    ['a role ARN (not a session)', { userArn: 'arn:aws:iam::123456789012:role/OrderWriter' }],
    ['an assumed role under iam', { userArn: 'arn:aws:iam::123456789012:assumed-role/OrderWriter/s1' }],
    ['a user ARN with a trailing newline', { userArn: 'arn:aws:iam::123456789012:user/alice\n' }],
    [
      'a malformed Cognito identity id',
      { userArn: 'arn:aws:iam::123456789012:user/alice', cognitoIdentityId: 'alice' },
    ],
  ])('%s', (_name, identity) => {
    expect(callerPrincipal(identity)).toBeUndefined();
  });
});
