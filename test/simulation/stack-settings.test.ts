import { synthStack } from '../support/synth';
import { referencedId, resourcesOfType, type CfnResource } from '../support/template';
import { DEFAULT_SETTINGS } from './world/world';

/**
 * The simulation runs the settings the stack deploys: its numbers for the
 * functions' timeouts and the relay's stream event source mapping are read
 * here from the synthesized template, so a change to lib/constructs that the
 * simulation does not follow fails this test instead of drifting silently.
 */
interface MappingProps {
  EventSourceArn: unknown;
  FunctionName: unknown;
  BatchSize?: number;
  FunctionResponseTypes?: string[];
  BisectBatchOnFunctionError?: boolean;
  MaximumRetryAttempts?: number;
  MaximumRecordAgeInSeconds?: number;
}

let resources: Record<string, CfnResource>;
let mappings: MappingProps[];

beforeAll(() => {
  const { template } = synthStack();
  resources = (template.toJSON() as { Resources: Record<string, CfnResource> }).Resources;
  mappings = resourcesOfType(template, 'AWS::Lambda::EventSourceMapping').map(
    ([, m]) => m.Properties as unknown as MappingProps,
  );
});

const functionProps = (id: string) =>
  resources[id].Properties as { Timeout?: number; Environment?: { Variables?: Record<string, unknown> } };
const streamMapping = () => {
  const stream = mappings.filter(
    (m) => (m.EventSourceArn as { 'Fn::GetAtt'?: string[] })['Fn::GetAtt']?.[1] === 'StreamArn',
  );
  expect(stream).toHaveLength(1);
  return stream[0];
};

test("the relay's stream mapping settings are the simulated mapping's", () => {
  const mapping = streamMapping();

  expect({
    relayBatchSize: mapping.BatchSize,
    relayRetryAttempts: mapping.MaximumRetryAttempts,
    relayMaxRecordAgeSeconds: mapping.MaximumRecordAgeInSeconds,
    relayBisectOnFunctionError: mapping.BisectBatchOnFunctionError,
  }).toEqual({
    relayBatchSize: DEFAULT_SETTINGS.relayBatchSize,
    relayRetryAttempts: DEFAULT_SETTINGS.relayRetryAttempts,
    relayMaxRecordAgeSeconds: DEFAULT_SETTINGS.relayMaxRecordAgeSeconds,
    relayBisectOnFunctionError: DEFAULT_SETTINGS.relayBisectOnFunctionError,
  });
  // The simulated relay's answers are read as partial batch responses.
  expect(mapping.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
});

test("the relay's, the sweeper's and both consumers' timeouts are the simulated ones", () => {
  const relay = referencedId(streamMapping().FunctionName)!;
  const consumers = mappings
    .filter((m) => resources[referencedId(m.EventSourceArn) ?? '']?.Type === 'AWS::SQS::Queue')
    .map((m) => referencedId(m.FunctionName)!);
  const sweepers = Object.keys(resources).filter(
    (id) =>
      resources[id].Type === 'AWS::Lambda::Function' &&
      functionProps(id).Environment?.Variables?.OUTBOX_SWEEP_AGE_SECONDS !== undefined,
  );

  expect(consumers).toHaveLength(2);
  expect(sweepers).toHaveLength(1);
  expect(functionProps(relay).Timeout).toBe(DEFAULT_SETTINGS.relayTimeoutSeconds);
  expect(functionProps(sweepers[0]).Timeout).toBe(DEFAULT_SETTINGS.sweeperTimeoutSeconds);
  expect(functionProps(sweepers[0]).Environment?.Variables?.OUTBOX_SWEEP_AGE_SECONDS).toBe(
    String(DEFAULT_SETTINGS.sweepAgeSeconds),
  );
  for (const consumer of consumers)
    expect(functionProps(consumer).Timeout).toBe(DEFAULT_SETTINGS.consumerTimeoutSeconds);
});
