import { callerPrincipal, callerRuleFromEnv, DEFAULT_HUMAN_ROLE_PATTERNS } from '@exactly-once/runtime/api';
import { ENV } from '@exactly-once/runtime/env-names';

/**
 * An API function reads its caller rule from the variable its stack sets from `-c humanRolePatterns`
 * (ENV.humanRolePatterns), once, at cold start; the rule itself is caller.test.ts's.
 */
const SAML_ROLE = 'arn:aws:sts::123456789012:assumed-role/Okta-Operators';

describe("callerRuleFromEnv reads the stage's rule from the environment", () => {
  const saved = process.env[ENV.humanRolePatterns];
  afterEach(() => {
    if (saved === undefined) delete process.env[ENV.humanRolePatterns];
    else process.env[ENV.humanRolePatterns] = saved;
  });

  test.each([
    ['unset', undefined],
    ['empty', ''],
  ])('%s: the default, Identity Center only', (_name, value) => {
    if (value === undefined) delete process.env[ENV.humanRolePatterns];
    else process.env[ENV.humanRolePatterns] = value;

    const rule = callerRuleFromEnv();

    expect(rule.humanRolePatterns).toEqual(DEFAULT_HUMAN_ROLE_PATTERNS);
  });

  test('a list as the stack sets it: a person of a listed SAML role is a caller of their own', () => {
    process.env[ENV.humanRolePatterns] = 'AWSReservedSSO_*,Okta-*';

    const rule = callerRuleFromEnv();

    expect(rule.humanRolePatterns).toEqual(['AWSReservedSSO_*', 'Okta-*']);
    expect(callerPrincipal({ userArn: `${SAML_ROLE}/jane@example.com` }, rule)).toBe(`${SAML_ROLE}/jane@example.com`);
  });

  test('a bad list stops the function, naming the variable', () => {
    process.env[ENV.humanRolePatterns] = 'AWSReservedSSO_*,My Role';

    expect(() => callerRuleFromEnv()).toThrow(/^Environment variable HUMAN_ROLE_PATTERNS: .*"My Role"/);
  });
});
