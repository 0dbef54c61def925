import { PROBE_STACK_CONSUMERS, synthProbeStack } from '../exactly-once/fixtures/probe-stack';

/**
 * Each function writes only to its own log group: no AWS-managed basic
 * execution role (it allows every log group in the account), and every
 * logs:* permission a function's role holds is on that function's log group.
 */
type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;
interface Statement {
  Action: string | string[];
  Resource: unknown;
}

const { template } = synthProbeStack();
const resources = template.toJSON().Resources as Resources;
const functions = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::Lambda::Function');

function roleOf(fn: { Properties: Record<string, unknown> }): string {
  return ((fn.Properties.Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'] ?? [])[0];
}

function statementsOf(roleId: string): Statement[] {
  return Object.values(resources)
    .filter((r) => r.Type === 'AWS::IAM::Policy')
    .filter((p) => (p.Properties.Roles as { Ref: string }[]).some((ref) => ref.Ref === roleId))
    .flatMap((p) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
}

const actions = (s: Statement) => (Array.isArray(s.Action) ? s.Action : [s.Action]);

test('the stack has functions to check', () => {
  // The relay, the sweeper, one per consumer, and the API's producer.
  expect(functions.length).toBeGreaterThanOrEqual(PROBE_STACK_CONSUMERS.length + 3);
});

test.each(functions.map(([id, fn]) => [id, fn]))('%s: its role has no AWS-managed basic execution role', (_, fn) => {
  const role = resources[roleOf(fn)];

  expect(role.Type).toBe('AWS::IAM::Role');
  expect(JSON.stringify(role.Properties.ManagedPolicyArns ?? [])).not.toContain('AWSLambdaBasicExecutionRole');
});

test.each(functions.map(([id, fn]) => [id, fn]))(
  '%s: may create streams and put events on its own log group, and on no other',
  (_, fn) => {
    const logGroupId = ((fn.Properties.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup ?? {}).Ref;
    const logStatements = statementsOf(roleOf(fn)).filter((s) => actions(s).some((a) => a.startsWith('logs:')));

    expect(resources[logGroupId].Type).toBe('AWS::Logs::LogGroup');
    expect(logStatements).toEqual([
      expect.objectContaining({ Action: ['logs:CreateLogStream', 'logs:PutLogEvents'], Resource: expect.any(Array) }),
    ]);
    // The group's ARN (its streams) and the group itself, both by its own logical id, nothing else.
    expect(logStatements[0].Resource).toEqual([
      { 'Fn::GetAtt': [logGroupId, 'Arn'] },
      {
        'Fn::Join': [
          '',
          [
            'arn:',
            { Ref: 'AWS::Partition' },
            ':logs:',
            { Ref: 'AWS::Region' },
            ':',
            { Ref: 'AWS::AccountId' },
            ':log-group:',
            { Ref: logGroupId },
          ],
        ],
      },
    ]);
  },
);
