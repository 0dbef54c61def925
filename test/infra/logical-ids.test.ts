import { consumerId } from '@exactly-once/runtime/consumer-spec';
import { CONSUMERS } from '../../lambdas/shop/consumers';
import { defaultStackTemplate } from '../support/synth';

/**
 * The logical ids of the stack's tables and queues. A changed id makes CloudFormation replace the
 * resource on the next deploy: a table is created empty and a queue loses its in-flight messages.
 * Moving files or renaming classes must leave this list alone; changing a construct id or its
 * parent scope changes it, and then the change needs a migration written down. A consumer added to
 * the list (`npm run new:consumer`) adds its queue and DLQ and changes none of these. These are the
 * shop's ids as deployed (its ExactlyOnce has the id `Default`, which CDK leaves out); that the
 * mechanism's parts keep their place inside ExactlyOnce, in any application: application-logical-ids.test.ts.
 */
const STATEFUL_LOGICAL_IDS = [
  'OutboxRelayRelayFailures09120D5F',
  'OutboxRelaySweeperAsyncDlq9581C93F',
  'PipelinesFulfilmentQueuesDlqA240ED52',
  'PipelinesFulfilmentQueuesQueue96CA1148',
  'PipelinesLoyaltyQueuesDlqCFC36CD2',
  'PipelinesLoyaltyQueuesQueue19400388',
  'StorageEffects82249474',
  'StorageIdempotency5C96D584',
  'StorageOrders79EED263',
  'StorageProviderLogF76E713B',
];

/** The consumers on the list whose queues are not pinned above: those added since (new:consumer). */
const ADDED_CONSUMERS = CONSUMERS.filter(
  ({ name }) => !STATEFUL_LOGICAL_IDS.some((id) => id.startsWith(`Pipelines${consumerId(name)}Queues`)),
);

function statefulLogicalIds(): string[] {
  const resources = defaultStackTemplate().Resources as Record<string, { Type: string }>;
  return Object.entries(resources)
    .filter(([, resource]) => resource.Type === 'AWS::DynamoDB::Table' || resource.Type === 'AWS::SQS::Queue')
    .map(([logicalId]) => logicalId);
}

test('tables and queues keep the logical ids a deployed stack has', () => {
  // Act
  const stateful = statefulLogicalIds();

  // Assert
  expect(stateful).toEqual(expect.arrayContaining(STATEFUL_LOGICAL_IDS));
});

test('every other table or queue is the queue or DLQ of a consumer added to the list, two per consumer', () => {
  // Act
  const others = statefulLogicalIds().filter((id) => !STATEFUL_LOGICAL_IDS.includes(id));

  // Assert: nothing the stack had was renamed into one of these; an added consumer brings its own two.
  expect(others.map((id) => id.replace(/[0-9A-F]{8}$/, '')).sort()).toEqual(
    ADDED_CONSUMERS.flatMap(({ name }) => [
      `Pipelines${consumerId(name)}QueuesDlq`,
      `Pipelines${consumerId(name)}QueuesQueue`,
    ]).sort(),
  );
});
