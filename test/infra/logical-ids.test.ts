import { defaultStackTemplate } from '../support/synth';

/**
 * The logical ids of the stack's tables and queues. A changed id makes CloudFormation replace the
 * resource on the next deploy: a table is created empty and a queue loses its in-flight messages.
 * Moving files or renaming classes must leave this list alone; changing a construct id or its
 * parent scope changes it, and then the change needs a migration written down.
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

test('tables and queues keep the logical ids a deployed stack has', () => {
  // Arrange
  const resources = defaultStackTemplate().Resources as Record<string, { Type: string }>;

  // Act
  const stateful = Object.entries(resources)
    .filter(([, resource]) => resource.Type === 'AWS::DynamoDB::Table' || resource.Type === 'AWS::SQS::Queue')
    .map(([logicalId]) => logicalId)
    .sort();

  // Assert
  expect(stateful).toEqual(STATEFUL_LOGICAL_IDS);
});
