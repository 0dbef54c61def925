import { eventSourceDefinitions } from '@exactly-once/tools/local-runtime/template/event-sources';
import { TemplateError, type CfnTemplate } from '@exactly-once/tools/local-runtime/template/model';
import { queueDefinitions } from '@exactly-once/tools/local-runtime/template/sqs';
import { restApiDefinitions } from '@exactly-once/tools/local-runtime/template/api';
import { alarmDefinitions } from '@exactly-once/tools/local-runtime/template/alarms';

/**
 * The local runtime reads its template with the reader the correctness aspects use
 * (packages/cdk/src/template), so the wiring it emulates is the wiring synth vouched for.
 */
function template(esm: Record<string, unknown>, queue: Record<string, unknown> = {}): CfnTemplate {
  return {
    Resources: {
      Queue: { Type: 'AWS::SQS::Queue', Properties: queue },
      Dlq: { Type: 'AWS::SQS::Queue' },
      Fn: { Type: 'AWS::Lambda::Function' },
      Live: { Type: 'AWS::Lambda::Alias', Properties: { FunctionName: { Ref: 'Fn' }, Name: 'live' } },
      Mapping: {
        Type: 'AWS::Lambda::EventSourceMapping',
        Properties: { EventSourceArn: { 'Fn::GetAtt': ['Queue', 'Arn'] }, FunctionName: { Ref: 'Fn' }, ...esm },
      },
    },
    Parameters: { Size: { Type: 'Number', Default: 5 } },
  };
}

test('a mapping that invokes an alias runs the function behind it', () => {
  // Arrange
  const aliased = template({ FunctionName: { Ref: 'Live' } });

  // Act
  const { sources, unsupported } = eventSourceDefinitions(aliased);

  // Assert
  expect(unsupported).toEqual([]);
  expect(sources).toMatchObject([{ kind: 'sqs', queueLogicalId: 'Queue', functionLogicalId: 'Fn' }]);
});

test('a batch size left to deploy time is refused, not run as NaN', () => {
  const parameterized = template({ BatchSize: { Ref: 'Size' } });

  expect(() => eventSourceDefinitions(parameterized)).toThrow(
    new TemplateError('Event source mapping Mapping: BatchSize is not a number known at synth time'),
  );
});

test('a redrive policy written as a JSON string, its target as a GetAtt string, is emulated like an object', () => {
  const redriven = template(
    {},
    { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: { 'Fn::GetAtt': 'Dlq.Arn' }, maxReceiveCount: '4' }) },
  );

  const queue = queueDefinitions(redriven).find((q) => q.logicalId === 'Queue');

  expect(queue?.redrive).toEqual({ deadLetterLogicalId: 'Dlq', maxReceiveCount: 4 });
});

test('a mapping the runtime cannot run is listed as unsupported, even with a batching window left to deploy time', () => {
  // Arrange
  const kinesis = template({
    EventSourceArn: 'arn:aws:kinesis:eu-west-1:111111111111:stream/s',
    MaximumBatchingWindowInSeconds: { Ref: 'Size' },
  });

  // Act
  const { sources, unsupported } = eventSourceDefinitions(kinesis);

  // Assert
  expect(sources).toEqual([]);
  expect(unsupported).toEqual([{ logicalId: 'Mapping', reason: expect.stringMatching(/^source kinesis /) }]);
});

test('a FifoQueue left to deploy time is refused', () => {
  const parameterized = template({}, { FifoQueue: { Ref: 'Size' } });

  expect(() => queueDefinitions(parameterized)).toThrow(/Queue Queue: FifoQueue is not a boolean known at synth time/);
});

test("a method on the API's root (ResourceId: GetAtt Api.RootResourceId) is the root resource", () => {
  // Arrange
  const api: CfnTemplate = {
    Resources: {
      Api: { Type: 'AWS::ApiGateway::RestApi', Properties: { Name: 'api' } },
      Fn: { Type: 'AWS::Lambda::Function' },
      Get: {
        Type: 'AWS::ApiGateway::Method',
        Properties: {
          RestApiId: { Ref: 'Api' },
          ResourceId: { 'Fn::GetAtt': ['Api', 'RootResourceId'] },
          HttpMethod: 'GET',
          Integration: { Type: 'AWS_PROXY', Uri: { 'Fn::Join': ['', ['arn:', { 'Fn::GetAtt': ['Fn', 'Arn'] }]] } },
        },
      },
    },
  };

  // Act
  const [definition] = restApiDefinitions(api);

  // Assert
  expect(definition.routes).toMatchObject([{ resourcePath: '/', resourceId: 'root', functionLogicalId: 'Fn' }]);
});

test("an alarm whose QueueName dimension is a Ref (the queue's URL, matching no metric) is not evaluated", () => {
  // Arrange
  const alarm = (queueName: unknown): CfnTemplate => ({
    Resources: {
      Queue: { Type: 'AWS::SQS::Queue' },
      Depth: {
        Type: 'AWS::CloudWatch::Alarm',
        Properties: {
          Namespace: 'AWS/SQS',
          MetricName: 'ApproximateNumberOfMessagesVisible',
          Dimensions: [{ Name: 'QueueName', Value: queueName }],
          Threshold: 1,
          ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        },
      },
    },
  });

  // Act
  const byName = alarmDefinitions(alarm({ 'Fn::GetAtt': ['Queue', 'QueueName'] }));
  const byRef = alarmDefinitions(alarm({ Ref: 'Queue' }));

  // Assert
  expect(byName.alarms.map((a) => a.queueLogicalId)).toEqual(['Queue']);
  expect(byRef.alarms).toEqual([]);
  expect(byRef.unsupported.map((u) => u.logicalId)).toEqual(['Depth']);
});
