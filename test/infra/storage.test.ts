import type { Template } from 'aws-cdk-lib/assertions';
import { synthStack } from '../support/synth';
import { resourcesOfType, tableNamesOf, type CfnResource } from '../support/template';

/** The tables, read from the synthesized template. */
let template: Template;
let tablesByName: Record<string, CfnResource>;

beforeAll(() => {
  const synth = synthStack();
  template = synth.template;
  const names = tableNamesOf(synth.stack);
  tablesByName = Object.fromEntries(resourcesOfType(template, 'AWS::DynamoDB::Table').map(([id, r]) => [names[id], r]));
});

function table(name: string): Record<string, unknown> {
  const resource = tablesByName[name];
  if (resource === undefined) throw new Error(`No table ${name}; tables: ${Object.keys(tablesByName).join(', ')}`);
  return resource.Properties ?? {};
}

test('every table has point-in-time recovery and server-side encryption', () => {
  const tables = resourcesOfType(template, 'AWS::DynamoDB::Table');

  expect(tables.length).toBeGreaterThanOrEqual(2);
  for (const [id, resource] of tables) {
    expect({ id, ...resource.Properties }).toMatchObject({
      id,
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      SSESpecification: { SSEEnabled: true },
    });
  }
});

describe('Orders', () => {
  test('is keyed pk/sk, so an order and its outbox items share a partition', () => {
    expect(table('Orders').KeySchema).toEqual([
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ]);
  });

  test('streams new images for the outbox relay', () => {
    expect(table('Orders').StreamSpecification).toEqual({ StreamViewType: 'NEW_IMAGE' });
  });

  test('has the sparse pending-outbox index the sweeper reads (pendingShard, createdAt)', () => {
    expect(table('Orders').GlobalSecondaryIndexes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          IndexName: 'pendingOutbox',
          KeySchema: [
            { AttributeName: 'pendingShard', KeyType: 'HASH' },
            { AttributeName: 'createdAt', KeyType: 'RANGE' },
          ],
        }),
      ]),
    );
  });
});

describe('Idempotency', () => {
  test('is keyed on `id`, the Powertools persistence default', () => {
    expect(table('Idempotency').KeySchema).toEqual([{ AttributeName: 'id', KeyType: 'HASH' }]);
  });

  test('expires records through TTL on `expiration`, the attribute Powertools writes its expiry to', () => {
    expect(table('Idempotency').TimeToLiveSpecification).toEqual({ AttributeName: 'expiration', Enabled: true });
  });
});

describe('removal policy comes from configuration', () => {
  test('destroy by default (a demo stack)', () => {
    for (const [id, resource] of resourcesOfType(template, 'AWS::DynamoDB::Table')) {
      expect({ id, policy: resource.DeletionPolicy }).toEqual({ id, policy: 'Delete' });
    }
  });

  test('retain when asked', () => {
    const { template: retained } = synthStack({ removalPolicy: 'retain' });

    for (const [id, resource] of resourcesOfType(retained, 'AWS::DynamoDB::Table')) {
      expect({ id, policy: resource.DeletionPolicy, replace: resource.UpdateReplacePolicy }).toEqual({
        id,
        policy: 'Retain',
        replace: 'Retain',
      });
    }
  });

  test('an unknown removal policy stops synthesis', () => {
    expect(() => synthStack({ removalPolicy: 'keep-please' })).toThrow(/removalPolicy must be one of/);
  });
});
