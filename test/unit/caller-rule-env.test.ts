import { callerPrincipal, DEFAULT_HUMAN_ROLE_PATTERNS } from '../../lambdas/exactly-once/api';
import { callerRuleFromEnv } from '../../lambdas/shop/api/order-request';

/**
 * The shop's API functions build their caller rule from HUMAN_ROLE_PATTERNS (set by the stack from
 * `-c humanRolePatterns`); the rule itself is the mechanism's (caller.test.ts).
 */
const SAML_ROLE = 'arn:aws:sts::123456789012:assumed-role/Okta-ShopOperators';

describe('the API functions read the rule from HUMAN_ROLE_PATTERNS at cold start', () => {
  const saved = process.env.HUMAN_ROLE_PATTERNS;
  afterEach(() => {
    if (saved === undefined) delete process.env.HUMAN_ROLE_PATTERNS;
    else process.env.HUMAN_ROLE_PATTERNS = saved;
  });

  test.each([
    ['unset', undefined],
    ['empty', ''],
  ])('%s: the default, Identity Center only', (_name, value) => {
    if (value === undefined) delete process.env.HUMAN_ROLE_PATTERNS;
    else process.env.HUMAN_ROLE_PATTERNS = value;

    expect(callerRuleFromEnv().humanRolePatterns).toEqual(DEFAULT_HUMAN_ROLE_PATTERNS);
  });

  test('a list as the stack sets it', () => {
    process.env.HUMAN_ROLE_PATTERNS = 'AWSReservedSSO_*,Okta-*';

    const rule = callerRuleFromEnv();

    expect(rule.humanRolePatterns).toEqual(['AWSReservedSSO_*', 'Okta-*']);
    expect(callerPrincipal({ userArn: `${SAML_ROLE}/jane@example.com` }, rule)).toBe(`${SAML_ROLE}/jane@example.com`);
  });

  test('a bad list stops the function, naming the variable', () => {
    process.env.HUMAN_ROLE_PATTERNS = 'AWSReservedSSO_*,My Role';

    expect(() => callerRuleFromEnv()).toThrow(/^Environment variable HUMAN_ROLE_PATTERNS: .*"My Role"/);
  });
});
