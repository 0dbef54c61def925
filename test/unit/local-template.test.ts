import { eventSourceDefinitions } from '../../tools/local-runtime/template/event-sources';
import { TemplateError, type CfnTemplate } from '../../tools/local-runtime/template/model';
import { queueDefinitions } from '../../tools/local-runtime/template/sqs';

/**
 * The local runtime reads its template with the reader the correctness aspects use
 * (lib/exactly-once/template), so the wiring it emulates is the wiring synth vouched for.
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

test('a redrive policy written as a JSON string is emulated like an object', () => {
  const redriven = template(
    {},
    { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: { 'Fn::GetAtt': ['Dlq', 'Arn'] }, maxReceiveCount: '4' }) },
  );

  const queue = queueDefinitions(redriven).find((q) => q.logicalId === 'Queue');

  expect(queue?.redrive).toEqual({ deadLetterLogicalId: 'Dlq', maxReceiveCount: 4 });
});

test('a FifoQueue left to deploy time is refused', () => {
  const parameterized = template({}, { FifoQueue: { Ref: 'Size' } });

  expect(() => queueDefinitions(parameterized)).toThrow(/Queue Queue: FifoQueue is not a boolean known at synth time/);
});
