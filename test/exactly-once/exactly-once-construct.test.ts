import { App, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import {
  ExactlyOnce,
  FunctionWithDefaults,
  IamRestApi,
  OutboxTable,
  setFunctionBuild,
  type ExactlyOnceProps,
  type FunctionWithDefaultsProps,
} from '@exactly-once/cdk';
import { IDEMPOTENCY_EXPIRY_ATTRIBUTE } from '@exactly-once/cdk/parts';
import { INBOX_TTL_ATTRIBUTE } from '@exactly-once/runtime/aws/inbox-table';
import { OUTBOX_TTL_ATTRIBUTE, PENDING_OUTBOX_INDEX } from '@exactly-once/runtime/aws/outbox-table';
import { STACK_OUTPUTS } from '@exactly-once/runtime/stack-outputs';
import { PROBE_SPEC } from './fixtures/probe-spec';

/**
 * The one construct an application's stack adds: it makes the mechanism's tables (or takes the
 * application's), grants each part what it does with them, and is complete without the application's
 * API (addApi adds it).
 */
type Built = { stack: Stack; app: App; exactlyOnce: ExactlyOnce; template: () => Template };

function build(props: Partial<ExactlyOnceProps> = {}, withApi = true, before?: (stack: Stack) => void): Built {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Probe');
  before?.(stack);
  const outboxTable = new OutboxTable(stack, 'Things');
  const exactlyOnce = new ExactlyOnce(stack, 'ExactlyOnce', {
    stage: 'dev',
    consumers: [PROBE_SPEC],
    producedTypes: PROBE_SPEC.eventTypes,
    outboxTable,
    entityPartitionPrefix: 'THING#',
    ...props,
  });
  if (withApi) {
    const api = new IamRestApi(stack, 'Api', {
      description: 'probe',
      rateLimit: 10,
      burstLimit: 20,
      createAccountLoggingRole: false,
    });
    api.api.root.addMethod('GET');
    exactlyOnce.addApi(api.api);
  }
  return { app, stack, exactlyOnce, template: () => Template.fromStack(stack) };
}

type Statement = { Action: string | string[]; Resource: unknown };
const statementsOf = (template: Template): Statement[] =>
  Object.values(template.findResources('AWS::IAM::Policy')).flatMap(
    (policy) => (policy.Properties as { PolicyDocument: { Statement: Statement[] } }).PolicyDocument.Statement,
  );
const actionsOn = (template: Template, tableRef: unknown): string[] =>
  statementsOf(template)
    .filter((s) => JSON.stringify(s.Resource).includes(JSON.stringify(tableRef)))
    .flatMap((s) => [s.Action].flat());

test('it makes the idempotency, effects and provider-log tables beside the application outbox table', () => {
  // Arrange
  const { template } = build();

  // Act
  const tables = template().findResources('AWS::DynamoDB::Table');

  // Assert
  expect(Object.keys(tables).sort()).toEqual([
    expect.stringMatching(/^ExactlyOnceStorageEffects/),
    expect.stringMatching(/^ExactlyOnceStorageIdempotency/),
    expect.stringMatching(/^ExactlyOnceStorageProviderLog/),
    expect.stringMatching(/^Things/),
  ]);
});

test("the consumer may put claims and update effects on the effects table, and nothing else there: the grants are the construct's", () => {
  // Arrange
  const { template, exactlyOnce, stack } = build();
  const effectsRef = stack.resolve((exactlyOnce.effectsTable.node.defaultChild as dynamodb.CfnTable).attrArn);

  // Act
  const actions = actionsOn(template(), effectsRef);

  // Assert
  expect(actions.sort()).toEqual(['dynamodb:PutItem', 'dynamodb:UpdateItem']);
});

test('an existing effects table replaces the one it would make: its name reaches the consumer, its ARN the grant', () => {
  // Arrange
  const arn = 'arn:aws:dynamodb:eu-west-1:123456789012:table/MyEffects';
  const app = new App();
  const existing = dynamodb.Table.fromTableArn(new Stack(app, 'Elsewhere'), 'Effects', arn);

  // Act
  const { template } = build({ existingEffectsTable: existing });

  // Assert
  const tables = Object.keys(template().findResources('AWS::DynamoDB::Table'));
  expect(tables.some((id) => id.startsWith('ExactlyOnceStorageEffects'))).toBe(false);
  expect(actionsOn(template(), arn).sort()).toEqual(['dynamodb:PutItem', 'dynamodb:UpdateItem']);
  const consumers = Object.values(template().findResources('AWS::Lambda::Function')).filter((fn) =>
    JSON.stringify(fn).includes('EFFECTS_TABLE_NAME'),
  );
  expect(consumers.map((fn) => JSON.stringify(fn))).toEqual([expect.stringContaining('"MyEffects"')]);
});

test('a table made here takes the settings given over the defaults', () => {
  // Arrange
  const { template } = build({ removalPolicy: undefined, idempotencyTableProps: { deletionProtection: true } });

  // Act
  const idempotency = Object.entries(template().findResources('AWS::DynamoDB::Table')).find(([id]) =>
    id.startsWith('ExactlyOnceStorageIdempotency'),
  )![1];

  // Assert
  expect(idempotency.Properties.DeletionProtectionEnabled).toBe(true);
  expect(idempotency.DeletionPolicy).toBe('Retain');
});

test("without an API it is complete: the pipelines' alarms and the tools' outputs are there, no ApiUrl, and synth says so", () => {
  // Arrange
  const { stack, template } = build({}, false);

  // Act
  const outputs = Object.keys(template().findOutputs('*'));
  const alarms = Object.values(template().findResources('AWS::CloudWatch::Alarm')).map(
    (alarm) => alarm.Properties.AlarmDescription as string,
  );
  const notes = Annotations.fromStack(stack).findInfo('*', Match.stringLikeRegexp('no API'));

  // Assert
  expect(outputs).toEqual(expect.arrayContaining([STACK_OUTPUTS.effectsTableName, STACK_OUTPUTS.stage]));
  expect(outputs).not.toContain(STACK_OUTPUTS.apiUrl);
  expect(alarms).toEqual(expect.arrayContaining([expect.stringMatching(new RegExp(`^${PROBE_SPEC.name} DLQ: holds`))]));
  expect(alarms.some((d) => d.startsWith('The API returned 5xx'))).toBe(false);
  expect(notes.map((n) => n.entry.data)).toEqual([expect.stringContaining(`no ${STACK_OUTPUTS.apiUrl} output`)]);
});

test('addApi adds the API alarm and the ApiUrl output, and no note of a missing API', () => {
  // Arrange
  const { stack, template } = build();

  // Act
  const outputs = Object.keys(template().findOutputs('*'));
  const alarms = Object.values(template().findResources('AWS::CloudWatch::Alarm')).map(
    (alarm) => alarm.Properties.AlarmDescription as string,
  );

  // Assert
  expect(outputs).toContain(STACK_OUTPUTS.apiUrl);
  expect(alarms.some((d) => d.startsWith('The API returned 5xx'))).toBe(true);
  expect(Annotations.fromStack(stack).findInfo('*', Match.stringLikeRegexp('no API'))).toEqual([]);
});

test.each([
  ['existingIdempotencyTable', 'idempotencyTableProps'],
  ['existingEffectsTable', 'effectsTableProps'],
  ['existingProviderLogTable', 'providerLogTableProps'],
] as const)('%s together with %s is refused at construction, naming both', (existingName, propsName) => {
  // Arrange
  const existing = dynamodb.Table.fromTableName(new Stack(new App(), 'Elsewhere'), 'Existing', 'Mine');
  const both = { [existingName]: existing, [propsName]: { deletionProtection: true } } as Partial<ExactlyOnceProps>;

  // Act
  const construct = () => build(both);

  // Assert
  expect(construct).toThrow(`ExactlyOnce: give ${existingName} or ${propsName}, not both`);
});

test("a user's keys and TTL do not replace the ones the runtime reads; the user's other settings apply", () => {
  // Arrange
  const mine = { name: 'mine', type: dynamodb.AttributeType.NUMBER };
  const { template } = build({
    effectsTableProps: { partitionKey: mine, sortKey: mine, timeToLiveAttribute: 'mine', deletionProtection: true },
    idempotencyTableProps: { partitionKey: mine, sortKey: mine, timeToLiveAttribute: 'mine' },
  });

  // Act
  const tables = Object.entries(template().findResources('AWS::DynamoDB::Table'));
  const table = (prefix: string) => tables.find(([id]) => id.startsWith(prefix))![1].Properties;
  const effects = table('ExactlyOnceStorageEffects');
  const idempotency = table('ExactlyOnceStorageIdempotency');

  // Assert
  expect(effects.KeySchema).toEqual([
    { AttributeName: 'pk', KeyType: 'HASH' },
    { AttributeName: 'sk', KeyType: 'RANGE' },
  ]);
  expect(effects.TimeToLiveSpecification).toEqual({ AttributeName: INBOX_TTL_ATTRIBUTE, Enabled: true });
  expect(effects.DeletionProtectionEnabled).toBe(true);
  expect(idempotency.KeySchema).toEqual([{ AttributeName: 'id', KeyType: 'HASH' }]);
  expect(idempotency.TimeToLiveSpecification).toEqual({ AttributeName: IDEMPOTENCY_EXPIRY_ATTRIBUTE, Enabled: true });
});

test('an OutboxTable carries what the relay and the sweeper read: the pk/sk keys, a new-image stream, the TTL and the pending index', () => {
  // Arrange
  const stack = new Stack(new App(), 'Outbox');
  const mine = { name: 'mine', type: dynamodb.AttributeType.NUMBER };

  // Act
  new OutboxTable(stack, 'Things', {
    tableProps: { partitionKey: mine, timeToLiveAttribute: 'mine', stream: dynamodb.StreamViewType.KEYS_ONLY },
  });

  // Assert
  const [table] = Object.values(Template.fromStack(stack).findResources('AWS::DynamoDB::Table'));
  expect(table.Properties.KeySchema).toEqual([
    { AttributeName: 'pk', KeyType: 'HASH' },
    { AttributeName: 'sk', KeyType: 'RANGE' },
  ]);
  expect(table.Properties.StreamSpecification).toEqual({ StreamViewType: 'NEW_IMAGE' });
  expect(table.Properties.TimeToLiveSpecification).toEqual({ AttributeName: OUTBOX_TTL_ATTRIBUTE, Enabled: true });
  expect(table.Properties.GlobalSecondaryIndexes).toEqual([
    expect.objectContaining({
      IndexName: PENDING_OUTBOX_INDEX,
      KeySchema: [
        { AttributeName: 'pendingShard', KeyType: 'HASH' },
        { AttributeName: 'createdAt', KeyType: 'RANGE' },
      ],
    }),
  ]);
});

/** A function of the application's, beside the construct in the same stack. */
const outsideFunction = (stack: Stack, props: Partial<FunctionWithDefaultsProps> = {}) =>
  new FunctionWithDefaults(stack, 'Outside', {
    entry: 'test/exactly-once/fixtures/probe-stack-producer.ts',
    asyncDeadLetterQueue: false,
    ...props,
  });
const retentionOf = (template: Template, logicalIdPrefix: string) =>
  Object.entries(template.findResources('AWS::Logs::LogGroup'))
    .filter(([id]) => id.startsWith(logicalIdPrefix))
    .map(([, group]) => group.Properties.RetentionInDays as number);

test("log retention applies to the construct's log groups, not to a function beside it, until retainLogsOf reaches it", () => {
  // Arrange
  const built = build({ logRetention: RetentionDays.ONE_YEAR });
  outsideFunction(built.stack);
  const optedIn = build({ logRetention: RetentionDays.ONE_YEAR });
  outsideFunction(optedIn.stack);

  // Act
  optedIn.exactlyOnce.retainLogsOf(optedIn.stack);

  // Assert
  expect(new Set(retentionOf(built.template(), 'ExactlyOncePipelines'))).toEqual(new Set([365]));
  expect(retentionOf(built.template(), 'Outside')).toEqual([30]);
  expect(retentionOf(optedIn.template(), 'Outside')).toEqual([365]);
});

test("the correctness rules check the construct's parts; the application's function is checked once checkAlso reaches it", () => {
  // Arrange
  const built = build();
  outsideFunction(built.stack, { reservedConcurrentExecutions: 1 });
  const optedIn = build();
  outsideFunction(optedIn.stack, { reservedConcurrentExecutions: 1 });

  // Act
  optedIn.exactlyOnce.checkAlso(optedIn.stack);

  // Assert
  const reservedConcurrencyErrors = (stack: Stack) =>
    Annotations.fromStack(stack).findError('*', Match.stringLikeRegexp('Correctness/ReservedConcurrency'));
  expect(reservedConcurrencyErrors(built.stack)).toEqual([]);
  expect(reservedConcurrencyErrors(optedIn.stack)).toEqual([
    expect.objectContaining({ id: expect.stringMatching(/^\/Probe\/Outside\//) }),
  ]);
});

test('a function of the stack that neither checkAlso nor retainLogsOf reaches is named in one warning at synth; none once they reach it', () => {
  // Arrange
  const leftOut = build();
  outsideFunction(leftOut.stack);
  const reached = build();
  outsideFunction(reached.stack);

  // Act
  reached.exactlyOnce.checkAlso(reached.stack);
  reached.exactlyOnce.retainLogsOf(reached.stack);

  // Assert
  const warnings = (stack: Stack) =>
    Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('ExactlyOnce:FunctionsLeftOut'));
  expect(warnings(leftOut.stack)).toEqual([
    expect.objectContaining({
      id: expect.stringMatching(/^\/Probe\/(Outside|Api)\//),
      entry: expect.objectContaining({
        data: expect.stringContaining('Call checkAlso(scope) and retainLogsOf(scope)'),
      }),
    }),
  ]);
  expect(warnings(reached.stack)).toEqual([]);
});

/** The environments of the functions the construct made (their logical ids start with its id). */
const constructFunctionEnvironments = (template: Template) =>
  Object.entries(template.findResources('AWS::Lambda::Function'))
    .filter(([id]) => id.startsWith('ExactlyOnce'))
    .map(([, fn]) => (fn.Properties.Environment?.Variables ?? {}) as Record<string, unknown>);

test("its functions' build comes from its props alone: a stack's setFunctionBuild (the application's functions) does not reach them", () => {
  // Arrange
  const stackBuild = (stack: Stack) =>
    setFunctionBuild(stack, { faultInjection: true, inboxBypass: false, openTelemetry: true });

  // Act
  const fromStack = build({}, true, stackBuild);
  const fromProps = build({ faultInjection: true, openTelemetry: true });

  // Assert
  expect(fromStack.exactlyOnce.faultSwitch).toBeUndefined();
  expect(constructFunctionEnvironments(fromStack.template()).some((env) => 'AWS_LAMBDA_EXEC_WRAPPER' in env)).toBe(
    false,
  );
  expect(fromProps.exactlyOnce.faultSwitch).toBeDefined();
  const withProps = constructFunctionEnvironments(fromProps.template());
  expect(withProps.length).toBeGreaterThan(0);
  expect(withProps.every((env) => 'AWS_LAMBDA_EXEC_WRAPPER' in env)).toBe(true);
});
