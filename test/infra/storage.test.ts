import { RemovalPolicy } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { synthProbeStack } from '../exactly-once/fixtures/probe-stack';
import { resourcesOfType, tableNamesOf, type CfnResource } from '../support/template';

/**
 * The tables, read from the probe stack's template: the mechanism's (Idempotency, Effects,
 * ProviderLog) and the application's outbox table. (The shop's Orders table: shop-stack.test.ts.)
 */
let template: Template;
let tablesByName: Record<string, CfnResource>;

beforeAll(() => {
  const synth = synthProbeStack();
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

describe('Idempotency', () => {
  test('is keyed on `id`, the Powertools persistence default', () => {
    expect(table('Idempotency').KeySchema).toEqual([{ AttributeName: 'id', KeyType: 'HASH' }]);
  });

  test('expires records through TTL on `expiration`, the attribute Powertools writes its expiry to', () => {
    expect(table('Idempotency').TimeToLiveSpecification).toEqual({ AttributeName: 'expiration', Enabled: true });
  });
});

describe("removal policy comes from the stage's settings", () => {
  test('destroy by default (a demo stack)', () => {
    for (const [id, resource] of resourcesOfType(template, 'AWS::DynamoDB::Table')) {
      expect({ id, policy: resource.DeletionPolicy }).toEqual({ id, policy: 'Delete' });
    }
  });

  test('retain when asked', () => {
    const { template: retained } = synthProbeStack({ settings: { removalPolicy: RemovalPolicy.RETAIN } });

    for (const [id, resource] of resourcesOfType(retained, 'AWS::DynamoDB::Table')) {
      expect({ id, policy: resource.DeletionPolicy, replace: resource.UpdateReplacePolicy }).toEqual({
        id,
        policy: 'Retain',
        replace: 'Retain',
      });
    }
  });
});
