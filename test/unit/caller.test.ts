import {
  callerPrincipal,
  callerRule,
  CallerRuleError,
  DEFAULT_CALLER_RULE,
  DEFAULT_HUMAN_ROLE_PATTERNS,
  parseHumanRolePatterns,
  type CallerIdentity,
} from '@exactly-once/runtime/api';

/**
 * The caller is the principal: every session of a workload role is one caller,
 * so a retry after a credential rotation stays in its key space; a session of a
 * role whose sessions are people (Identity Center by default) is the person.
 * ARN shapes as API Gateway puts them in requestContext.identity.userArn.
 */
const COGNITO_ID = 'us-east-1:3f2a1b4c-5d6e-4f70-8a9b-0c1d2e3f4a5b';
/** The deployed default: sessions of IAM Identity Center permission sets are people. */
const caller = (identity: CallerIdentity) => callerPrincipal(identity, DEFAULT_CALLER_RULE);

describe('workload role sessions map to their role', () => {
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
      'a session name with @ = , . -',
      'arn:aws:sts::123456789012:assumed-role/OrderWriter/a@b=c,d.e-f',
      'arn:aws:sts::123456789012:assumed-role/OrderWriter',
    ],
  ])('%s', (_name, userArn, principal) => {
    expect(caller({ userArn })).toBe(principal);
  });

  test('two sessions of one role are one caller; two roles are two', () => {
    const session = (role: string, name: string) => `arn:aws:sts::123456789012:assumed-role/${role}/${name}`;

    const before = caller({ userArn: session('OrderWriter', 'ecs-task-a') });
    const afterRotation = caller({ userArn: session('OrderWriter', 'ecs-task-b') });
    const otherRole = caller({ userArn: session('OrderReader', 'ecs-task-a') });

    expect(afterRotation).toBe(before);
    expect(otherRole).not.toBe(before);
  });

  test('the same role name in two accounts or partitions is two callers', () => {
    const a = caller({ userArn: 'arn:aws:sts::111111111111:assumed-role/OrderWriter/s1' });
    const b = caller({ userArn: 'arn:aws:sts::222222222222:assumed-role/OrderWriter/s1' });
    const c = caller({ userArn: 'arn:aws-cn:sts::111111111111:assumed-role/OrderWriter/s1' });

    expect(new Set([a, b, c]).size).toBe(3);
  });
});

const IDENTITY_CENTER = 'arn:aws:sts::123456789012:assumed-role/AWSReservedSSO_AdministratorAccess_0123456789abcdef';
const SAML_ROLE = 'arn:aws:sts::123456789012:assumed-role/Okta-ShopOperators';
const WORKLOAD_ROLE = 'arn:aws:sts::123456789012:assumed-role/OrderService';
/** A stage that also federates people through its SAML IdP's roles (`-c humanRolePatterns=AWSReservedSSO_*,Okta-*`). */
const WITH_SAML = callerRule(['AWSReservedSSO_*', 'Okta-*']);

describe('people: a session of a role the rule names is a caller of its own', () => {
  test('the default names IAM Identity Center permission sets only', () => {
    expect(DEFAULT_HUMAN_ROLE_PATTERNS).toEqual(['AWSReservedSSO_*']);
    expect(DEFAULT_CALLER_RULE.humanRolePatterns).toEqual(['AWSReservedSSO_*']);
  });

  test.each([
    ['Identity Center, an e-mail user name', `${IDENTITY_CENTER}/alice@example.com`],
    ['Identity Center, a plain user name', `${IDENTITY_CENTER}/alice`],
    [
      'Identity Center, aws-us-gov',
      'arn:aws-us-gov:sts::123456789012:assumed-role/AWSReservedSSO_ReadOnly_fedcba9876543210/bob@example.com',
    ],
  ])('%s: the session ARN as is', (_name, userArn) => {
    expect(caller({ userArn })).toBe(userArn);
  });

  test('two users of one permission set are two callers; one user on refreshed credentials stays one', () => {
    const alice = caller({ userArn: `${IDENTITY_CENTER}/alice@example.com` });
    // A refresh gives new keys but the same session name: Identity Center sets it to the user name.
    const aliceAfterRefresh = caller({ userArn: `${IDENTITY_CENTER}/alice@example.com` });
    const bob = caller({ userArn: `${IDENTITY_CENTER}/bob@example.com` });

    expect(aliceAfterRefresh).toBe(alice);
    expect(bob).not.toBe(alice);
    expect(alice).not.toBe(IDENTITY_CENTER);
  });

  test('a SAML-federated role configured as people: each user is a caller', () => {
    const jane = `${SAML_ROLE}/jane.doe@example.com`;
    const john = `${SAML_ROLE}/john.roe@example.com`;

    expect(callerPrincipal({ userArn: jane }, WITH_SAML)).toBe(jane);
    expect(callerPrincipal({ userArn: john }, WITH_SAML)).toBe(john);
  });

  test('the same SAML role without that configuration collapses to the role (the safe default for unknown names)', () => {
    expect(caller({ userArn: `${SAML_ROLE}/jane.doe@example.com` })).toBe(SAML_ROLE);
  });

  test.each([
    ['an EC2 instance profile / ECS task session', `${WORKLOAD_ROLE}/i-0abc123def4567890`],
    ['an SDK session (botocore)', `${WORKLOAD_ROLE}/botocore-session-1700000000`],
    ['a Lambda session', `${WORKLOAD_ROLE}/order-service-fn`],
  ])('a workload role under a rule with people roles still collapses: %s', (_name, userArn) => {
    expect(callerPrincipal({ userArn }, WITH_SAML)).toBe(WORKLOAD_ROLE);
    expect(caller({ userArn })).toBe(WORKLOAD_ROLE);
  });

  test.each([
    ['a prefix pattern is anchored at the start', 'Okta-*', 'MyOkta-Admins'],
    ['an exact name is not a prefix', 'ShopOperators', 'ShopOperators2'],
    ['a suffix pattern is anchored at the end', '*-Humans', 'Shop-Humans-CI'],
    ['the Identity Center prefix is not matched mid-name', 'AWSReservedSSO_*', 'NotAWSReservedSSO_Admin_0123'],
  ])('a pattern that does not match leaves the role a workload: %s', (_name, pattern, role) => {
    const rule = callerRule([pattern]);
    const userArn = `arn:aws:sts::123456789012:assumed-role/${role}/jane@example.com`;

    expect(callerPrincipal({ userArn }, rule)).toBe(`arn:aws:sts::123456789012:assumed-role/${role}`);
  });

  test.each([
    ['a prefix', 'Okta-*', 'Okta-ShopOperators'],
    ['a suffix', '*-Humans', 'Shop-Humans'],
    ['an exact name', 'ShopOperators', 'ShopOperators'],
    ['two wildcards', 'Saml-*-People-*', 'Saml-Shop-People-eu'],
    ['case-insensitively, as IAM treats role names', 'okta-*', 'OKTA-ShopOperators'],
    // A comma cannot be written in a pattern (it separates them); a role name with one still matches through `*`.
    ['a role name with punctuation, its comma through *', 'Team+Ops=1*2.x@y-*', 'Team+Ops=1,2.x@y-z'],
  ])('a pattern matches %s', (_name, pattern, role) => {
    const rule = callerRule([pattern]);
    const userArn = `arn:aws:sts::123456789012:assumed-role/${role}/jane@example.com`;

    expect(callerPrincipal({ userArn }, rule)).toBe(userArn);
  });

  test('a Cognito identity still wins over its pool role, whatever the rule says of the role', () => {
    const userArn = 'arn:aws:sts::123456789012:assumed-role/Cognito_PoolAuth_Role/CognitoIdentityCredentials';

    expect(callerPrincipal({ userArn, cognitoIdentityId: COGNITO_ID }, callerRule(['Cognito_*']))).toBe(COGNITO_ID);
  });

  test('IAM users, federated users and root keep their ARN under any rule', () => {
    for (const userArn of [
      'arn:aws:iam::123456789012:user/alice',
      'arn:aws:sts::123456789012:federated-user/jane@example.com',
      'arn:aws:iam::123456789012:root',
    ]) {
      expect(callerPrincipal({ userArn }, WITH_SAML)).toBe(userArn);
    }
  });
});

describe('the rule refuses patterns it cannot take', () => {
  test.each([
    ['no pattern', []],
    ['an empty pattern', ['']],
    ['an empty pattern in a list', parseHumanRolePatterns('AWSReservedSSO_*,,Okta-*')],
    ['a space', ['My Role']],
    ['a slash (a role path is not part of the name)', ['team/Operators']],
    ['a comma (it separates patterns)', ['Okta,Admins']],
    ['a glob character other than *', ['Okta-?']],
    ['a character class', ['Okta-[ab]']],
    ['a non-ASCII letter', ['Opérateurs']],
    ['longer than a role name', ['x'.repeat(65)]],
    ['only a wildcard: every workload would become people', ['*']],
    ['only wildcards', ['AWSReservedSSO_*', '**']],
  ])('%s', (_name, patterns) => {
    expect(() => callerRule(patterns)).toThrow(CallerRuleError);
  });

  test('the error names the pattern', () => {
    expect(() => callerRule(['My Role'])).toThrow('"My Role"');
  });

  test('a comma-separated list is split and trimmed', () => {
    expect(parseHumanRolePatterns('AWSReservedSSO_*, Okta-* ')).toEqual(['AWSReservedSSO_*', 'Okta-*']);
    expect(callerRule(parseHumanRolePatterns('AWSReservedSSO_*, Okta-*')).humanRolePatterns).toEqual([
      'AWSReservedSSO_*',
      'Okta-*',
    ]);
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
    expect(caller({ userArn })).toBe(userArn);
  });
});

describe('a Cognito identity is its identity id', () => {
  test("it wins over the userArn, which is the pool role's session that every pool user shares", () => {
    const userArn = 'arn:aws:sts::123456789012:assumed-role/Cognito_PoolAuth_Role/CognitoIdentityCredentials';

    expect(caller({ userArn, cognitoIdentityId: COGNITO_ID })).toBe(COGNITO_ID);
  });

  test('two identities of one pool are two callers', () => {
    const userArn = 'arn:aws:sts::123456789012:assumed-role/Cognito_PoolAuth_Role/CognitoIdentityCredentials';
    const other = 'us-gov-west-1:00000000-1111-4222-8333-444444444444';

    expect(caller({ userArn, cognitoIdentityId: other })).toBe(other);
    expect(caller({ userArn, cognitoIdentityId: other })).not.toBe(COGNITO_ID);
  });

  test('an empty identity id is absent (API Gateway sends null or ""), so the userArn decides', () => {
    expect(caller({ userArn: 'arn:aws:iam::123456789012:user/alice', cognitoIdentityId: '' })).toBe(
      'arn:aws:iam::123456789012:user/alice',
    );
    expect(caller({ userArn: 'arn:aws:iam::123456789012:user/alice', cognitoIdentityId: null })).toBe(
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
    expect(caller(identity)).toBeUndefined();
  });
});

describe('the proof kit on a deployed stack derives its caller as the API does', () => {
  test('a workload role session is the role; an Identity Center session is the person; by the stack output', async () => {
    const { deployedCaller } = await import('@exactly-once/tools/proof-kit/target');
    const workload = 'arn:aws:sts::123456789012:assumed-role/CiRole/botocore-session-1700000000';
    const person = 'arn:aws:sts::123456789012:assumed-role/AWSReservedSSO_Admin_0123456789abcdef/alice@example.com';
    const saml = 'arn:aws:sts::123456789012:assumed-role/Okta-Engineers/bob@example.com';

    const callers = [
      deployedCaller(workload, undefined),
      deployedCaller(person, undefined),
      deployedCaller(saml, undefined),
      deployedCaller(saml, 'AWSReservedSSO_*,Okta-*'),
    ];

    expect(callers).toEqual([
      'arn:aws:sts::123456789012:assumed-role/CiRole',
      person,
      'arn:aws:sts::123456789012:assumed-role/Okta-Engineers',
      saml,
    ]);
  });
});
