import { probeStackTemplate } from '../exactly-once/fixtures/probe-stack';

/**
 * The alarm topic's policies, read from the probe stack's template: CloudWatch
 * may publish, but only for this account and this stack's alarms, and may use
 * the topic key only to make and read data keys. (That the policies let every
 * alarm publish at all is the AlarmDelivery aspect's rule, tested with it.)
 */
type Statement = {
  Sid?: string;
  Effect: string;
  Principal?: { Service?: unknown; AWS?: unknown };
  Action: string | string[];
  Resource?: unknown;
  Condition?: Record<string, Record<string, unknown>>;
};
type Resource = { Type: string; Properties: Record<string, unknown> };

const resources = () => probeStackTemplate().Resources as Record<string, Resource>;
const ofType = (type: string) => Object.entries(resources()).filter(([, r]) => r.Type === type);
const THIS_ACCOUNT = { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } };

function cloudWatchStatements(document: unknown): Statement[] {
  return (document as { Statement: Statement[] }).Statement.filter(
    (s) => s.Principal?.Service === 'cloudwatch.amazonaws.com',
  );
}

test('the topic key lets CloudWatch only Decrypt and GenerateDataKey*, for this account', () => {
  const keys = ofType('AWS::KMS::Key');
  expect(keys).toHaveLength(1);

  const statements = cloudWatchStatements(keys[0][1].Properties.KeyPolicy);

  expect(statements).toHaveLength(1);
  expect(statements[0]).toMatchObject({ Effect: 'Allow', Resource: '*', Condition: { StringEquals: THIS_ACCOUNT } });
  expect([statements[0].Action].flat().sort()).toEqual(['kms:Decrypt', 'kms:GenerateDataKey*']);
});

test("the topic policy lets CloudWatch publish for this account and exactly this stack's alarms; the TLS Deny stays", () => {
  const [[topicId]] = ofType('AWS::SNS::Topic');
  const policies = ofType('AWS::SNS::TopicPolicy');
  expect(policies).toHaveLength(1);
  const document = policies[0][1].Properties.PolicyDocument as { Statement: Statement[] };
  const alarmArns = ofType('AWS::CloudWatch::Alarm').map(([id]) => ({ 'Fn::GetAtt': [id, 'Arn'] }));

  const [allow, ...others] = cloudWatchStatements(document);

  expect(others).toEqual([]);
  expect(allow).toMatchObject({ Effect: 'Allow', Action: 'sns:Publish', Resource: { Ref: topicId } });
  expect(allow.Condition?.StringEquals).toEqual(THIS_ACCOUNT);
  const sourceArns = allow.Condition?.ArnEquals?.['aws:SourceArn'] as unknown[];
  expect(sourceArns).toHaveLength(alarmArns.length);
  expect(sourceArns).toEqual(expect.arrayContaining(alarmArns));
  expect(document.Statement).toContainEqual(
    expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
  );
});

test("a malformed outbox item alarms on the sweeper's metric, with the dimensions of its age metric, on the first one", () => {
  const alarms = ofType('AWS::CloudWatch::Alarm').map(([, r]) => r.Properties);
  const age = alarms.find((a) => a.MetricName === 'OldestUndispatchedOutboxAgeSeconds');
  const malformed = alarms.filter((a) => a.MetricName === 'MalformedOutboxItem');

  expect(malformed).toHaveLength(1);
  expect(malformed[0]).toMatchObject({
    Namespace: age?.Namespace,
    Dimensions: age?.Dimensions,
    Statistic: 'Sum',
    Period: 300,
    Threshold: 1,
    ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    AlarmDescription: expect.stringMatching(/Runbook: docs\/runbook\.md#malformed-outbox-item$/),
  });
});

test('the alarm topic is a stack output, AlarmTopicArn, with a description, so its ARN needs no console', () => {
  const [[topicId]] = ofType('AWS::SNS::Topic');

  const outputs = (probeStackTemplate() as { Outputs: Record<string, { Value: unknown; Description?: string }> })
    .Outputs;

  expect(outputs.AlarmTopicArn).toEqual({ Value: { Ref: topicId }, Description: expect.stringContaining('SNS topic') });
});
