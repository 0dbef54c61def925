import { App, CfnResource, Stack } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { consumerId } from '@exactly-once/runtime/consumer-spec';
import { applicationStack, everyProviderConfigured, type ApplicationStack } from './application-stack';

/**
 * The logical ids of the mechanism's parts in the application's stack (lib/app-stack.ts), whatever its
 * domain. A changed logical id makes CloudFormation replace the resource on the next deploy: a table is
 * created empty, a queue loses its messages, the alarm topic its subscriptions. A logical id follows
 * from the resource's path in the stack, so the parts are listed here by their path inside ExactlyOnce
 * (its tables, queues, relay and sweeper, alarm topic and alarms, each consumer's queue, DLQ, function
 * and alarms): a change of the construct that moves one fails here, in every application, before it
 * replaces anything. No stage setting moves them either. (Where the example places ExactlyOnce, and
 * the ids of its own tables: its stack tests.)
 */
const TABLE = 'AWS::DynamoDB::Table';
const QUEUE = 'AWS::SQS::Queue';
const FUNCTION = 'AWS::Lambda::Function';
const TOPIC = 'AWS::SNS::Topic';
const ALARM = 'AWS::CloudWatch::Alarm';
/** The types whose every resource inside ExactlyOnce is listed: nothing of these is made without a name here. */
const LISTED_IN_FULL = [TABLE, QUEUE, FUNCTION, TOPIC];

/** The parts ExactlyOnce makes once, by their path inside it. */
const PARTS: Record<string, string> = {
  'Storage/Idempotency': TABLE,
  'Storage/Effects': TABLE,
  'Storage/ProviderLog': TABLE,
  'OutboxRelay/RelayFailures': QUEUE,
  'OutboxRelay/Sweeper/AsyncDlq': QUEUE,
  'OutboxRelay/Relay/Fn': FUNCTION,
  'OutboxRelay/Sweeper/Fn': FUNCTION,
  'Monitoring/AlarmTopic': TOPIC,
  ...Object.fromEntries(
    [
      'relay-on-failure-queue-not-empty',
      'relay-on-failure-queue-oldest-age',
      'relay-dropped-records',
      'relay-iterator-age',
      'relay-handler-errors',
      'relay-handler-throttles',
      'oldest-undispatched-outbox-item',
      'malformed-outbox-item',
      'sweeper-handler-async-DLQ-not-empty',
      'sweeper-handler-async-DLQ-oldest-age',
      'sweeper-handler-errors',
      'sweeper-handler-throttles',
    ].map((alarm) => [`Monitoring/${alarm}`, ALARM]),
  ),
};

/** The parts ExactlyOnce makes for each consumer on the list, by their path inside it. */
const consumerParts = (name: string): Record<string, string> => ({
  [`Pipelines/${consumerId(name)}Queues/Queue`]: QUEUE,
  [`Pipelines/${consumerId(name)}Queues/Dlq`]: QUEUE,
  [`Pipelines/${consumerId(name)}Consumer/Fn`]: FUNCTION,
  ...Object.fromEntries(
    [
      'DLQ-not-empty',
      'DLQ-oldest-age',
      'source-oldest-age',
      'deliveries-failing',
      'duration-near-deadline',
      'consumer-errors',
      'consumer-throttles',
    ].map((alarm) => [`Monitoring/${name}-${alarm}`, ALARM]),
  ),
});

/** The path of ExactlyOnce below its stack, as the ids of its scopes (`['Default']`, `['ExactlyOnce']`). */
const placeOf = ({ stack, exactlyOnce }: ApplicationStack): string[] =>
  exactlyOnce.node.path.slice(stack.node.path.length + 1).split('/');

/**
 * The logical id CDK gives a resource at `path` below a stack, worked out by CDK itself on an empty stack
 * with nothing but that path in it (the `Resource` a construct's CloudFormation resource is named).
 */
function logicalIdAt(path: string[]): string {
  const stack = new Stack(new App(), 'Scratch');
  let scope: Construct = stack;
  for (const id of path) scope = new Construct(scope, id);
  return stack.getLogicalId(new CfnResource(scope, 'Resource', { type: 'Custom::Part' }));
}

/** The listed parts of an application's stack, each with the logical id its path gives it. */
function expectedIds(app: ApplicationStack): Record<string, { type: string; logicalId: string }> {
  const parts = { ...PARTS, ...Object.assign({}, ...app.consumers.map(({ name }) => consumerParts(name))) } as Record<
    string,
    string
  >;
  return Object.fromEntries(
    Object.entries(parts).map(([path, type]) => [
      path,
      { type, logicalId: logicalIdAt([...placeOf(app), ...path.split('/')]) },
    ]),
  );
}

/** What the stack has inside ExactlyOnce, by path inside it: the CloudFormation resources of the listed types. */
function actualIds(app: ApplicationStack): Record<string, { type: string; logicalId: string }> {
  return Object.fromEntries(
    app.exactlyOnce.node
      .findAll()
      .filter(
        (c): c is CfnResource => c instanceof CfnResource && [...LISTED_IN_FULL, ALARM].includes(c.cfnResourceType),
      )
      .map((c) => [
        c.node.path.slice(app.exactlyOnce.node.path.length + 1).replace(/\/Resource$/, ''),
        { type: c.cfnResourceType, logicalId: app.stack.resolve(c.logicalId) as string },
      ]),
  );
}

const plain = applicationStack();

test("each of the mechanism's tables, queues, functions, alarm topic and alarms has the logical id its place in ExactlyOnce gives it", () => {
  // Arrange
  const expected = expectedIds(plain);

  // Act
  const actual = actualIds(plain);

  // Assert
  expect(actual).toMatchObject(expected);
  const template = plain.template.toJSON().Resources as Record<string, { Type: string }>;
  for (const { type, logicalId } of Object.values(expected)) expect(template[logicalId]?.Type).toBe(type);
});

test('no table, queue, function or topic inside ExactlyOnce is missing from the list: a new one is listed before it ships', () => {
  // Arrange
  const expected = expectedIds(plain);

  // Act
  const unlisted = Object.entries(actualIds(plain))
    .filter(([path, { type }]) => LISTED_IN_FULL.includes(type) && expected[path] === undefined)
    .map(([path, { type }]) => `${type} ${path}`);

  // Assert
  expect(unlisted).toEqual([]);
});

test.each([
  ['stage prod', { stage: 'prod' }],
  ['fault injection', { faultInjection: 'true' }],
  ["the local runtime's build", { localRuntime: 'true' }],
  ['OpenTelemetry', { openTelemetry: 'true' }],
  ['every provider configured', { providers: everyProviderConfigured(plain.consumers) }],
])('%s moves none of them', (_setting, context) => {
  // Arrange
  const expected = expectedIds(plain);

  // Act
  const actual = actualIds(applicationStack(context));

  // Assert
  expect(actual).toMatchObject(expected);
});
