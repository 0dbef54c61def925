import {
  eventSourceOf,
  functionsNamedBy,
  isFifoQueue,
  redrivePolicyOf,
  referencedLogicalIds,
  templateLookup,
  type TemplateResource,
} from '@exactly-once/cdk/template';

/**
 * The template reader the correctness aspects and the local runtime share: what a reference, an
 * event source, a function name and a redrive policy mean in a synthesized template.
 */
const resources: Record<string, TemplateResource> = {
  Queue: { Type: 'AWS::SQS::Queue', Properties: { FifoQueue: 'true' } },
  Dlq: { Type: 'AWS::SQS::Queue' },
  Orders: { Type: 'AWS::DynamoDB::Table' },
  Fn: { Type: 'AWS::Lambda::Function' },
  Other: { Type: 'AWS::Lambda::Function' },
  FnVersion: { Type: 'AWS::Lambda::Version', Properties: { FunctionName: { Ref: 'Fn' } } },
  // As aws-cdk-lib renders an alias's name: a Select over the Split of the alias's ARN, which names the version.
  FnAlias: {
    Type: 'AWS::Lambda::Alias',
    Properties: { FunctionName: { Ref: 'Fn' }, FunctionVersion: { 'Fn::GetAtt': ['FnVersion', 'Version'] } },
  },
  Topic: { Type: 'AWS::SNS::Topic' },
};
const lookup = templateLookup(resources, (id) => `Stack/${id}`);

describe('references', () => {
  test('a Ref, a GetAtt inside a Join and the names of a Sub text are references; pseudo parameters and escapes are not', () => {
    const value = {
      'Fn::Join': [
        '',
        [
          { Ref: 'AWS::Region' },
          { 'Fn::GetAtt': ['Queue', 'Arn'] },
          { 'Fn::Sub': ['${Fn.Arn}/${Local}/${AWS::AccountId}/${!Literal}', { Local: { Ref: 'Dlq' } }] },
        ],
      ],
    };

    expect(referencedLogicalIds(value)).toEqual(['Queue', 'Fn', 'Dlq']);
  });
});

describe('event sources', () => {
  test.each([
    ['a queue of the template', { 'Fn::GetAtt': ['Queue', 'Arn'] }, { kind: 'sqs', logicalId: 'Queue' }],
    [
      "a table's stream",
      { 'Fn::GetAtt': ['Orders', 'StreamArn'] },
      { kind: 'dynamodb', logicalId: 'Orders', description: 'of Stack/Orders' },
    ],
    ["a table's ARN (not its stream)", { 'Fn::GetAtt': ['Orders', 'Arn'] }, { kind: 'other' }],
    ['a stream outside the template', 'arn:aws:dynamodb:eu-west-1:1:table/t/stream/x', { kind: 'dynamodb' }],
    ['a queue outside the template', 'arn:aws:sqs:eu-west-1:1:q', { kind: 'unresolved', service: 'sqs' }],
  ])('%s', (_what, arn, expected) => {
    expect(eventSourceOf({ EventSourceArn: arn }, lookup)).toMatchObject(expected);
  });

  test('a mapping with no source ARN is unresolved, a self-managed Kafka one is other', () => {
    expect(eventSourceOf({}, lookup).kind).toBe('unresolved');
    expect(eventSourceOf({ SelfManagedEventSource: {} }, lookup).kind).toBe('other');
  });
});

describe('functions', () => {
  test.each([
    ['a Ref', { Ref: 'Fn' }],
    ['an ARN in a Sub text', { 'Fn::Sub': 'arn:aws:apigateway:${AWS::Region}:lambda:path/${Fn.Arn}/invocations' }],
    ['an alias', { 'Fn::Select': [6, { 'Fn::Split': [':', { Ref: 'FnAlias' }] }] }],
    ['a version', { Ref: 'FnVersion' }],
  ])('%s names its function', (_what, value) => {
    expect(functionsNamedBy(value, lookup)).toEqual(['Fn']);
  });

  test('a value naming two functions names both, one naming none names none', () => {
    expect(functionsNamedBy([{ Ref: 'Fn' }, { Ref: 'Other' }], lookup)).toEqual(['Fn', 'Other']);
    expect(functionsNamedBy({ Ref: 'Topic' }, lookup)).toEqual([]);
  });
});

describe('queues', () => {
  test('a redrive policy written as a JSON string is read like an object', () => {
    const policy = redrivePolicyOf({
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: { 'Fn::GetAtt': ['Dlq', 'Arn'] }, maxReceiveCount: 5 }),
    });

    expect(policy).toMatchObject({ targetLogicalId: 'Dlq', maxReceiveCount: 5 });
    expect(redrivePolicyOf({})).toBeUndefined();
  });

  test('FifoQueue unset is standard, a string is read, a token is not known', () => {
    expect(isFifoQueue({})).toBe(false);
    expect(isFifoQueue({ FifoQueue: 'true' })).toBe(true);
    expect(isFifoQueue({ FifoQueue: { Ref: 'Param' } })).toBeUndefined();
  });
});
