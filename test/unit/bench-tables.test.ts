import { STACK_OUTPUTS } from '@exactly-once/runtime/stack-outputs';
import { stackTables } from '@exactly-once/tools/bench/tables';
import type { CfnTemplate } from '@exactly-once/tools/local-runtime/template/model';

/**
 * The bench finds the stack's tables from what every stack of the mechanism has, whatever the domain:
 * the entity table by the output the proof domain names, the mechanism's tables by its outputs, and
 * the idempotency table by its shape in the template (partition key `id`, TTL `expiration`).
 */
const table = (keys: [string, string][], ttl?: string) => ({
  Type: 'AWS::DynamoDB::Table',
  Properties: {
    KeySchema: keys.map(([AttributeName, KeyType]) => ({ AttributeName, KeyType })),
    ...(ttl === undefined ? {} : { TimeToLiveSpecification: { AttributeName: ttl, Enabled: true } }),
  },
});

const TEMPLATE: CfnTemplate = {
  Resources: {
    BookingsTable1A2B3C4D: table([
      ['pk', 'HASH'],
      ['sk', 'RANGE'],
    ]),
    // Keyed `id` like Powertools' table, but without its TTL: not the idempotency table.
    AuditTableF00D: table([['id', 'HASH']]),
    ExactlyOnceIdempotencyAB12CD34: table([['id', 'HASH']], 'expiration'),
  },
};
const OUTPUTS = {
  BookingsTableName: 'bookings-local',
  [STACK_OUTPUTS.effectsTableName]: 'effects-local',
  [STACK_OUTPUTS.providerLogTableName]: 'provider-log-local',
};
const BY_LOGICAL_ID = { ExactlyOnceIdempotencyAB12CD34: 'idempotency-local', AuditTableF00D: 'audit-local' };

describe('the bench finds the stack tables', () => {
  it('by the domain output, the mechanism outputs and the idempotency table shape in the template', () => {
    const tables = stackTables(OUTPUTS, 'BookingsTableName', TEMPLATE, BY_LOGICAL_ID);

    expect(tables).toEqual({
      entities: 'bookings-local',
      idempotency: 'idempotency-local',
      effects: 'effects-local',
      providerLog: 'provider-log-local',
    });
  });

  it('refuses, naming what is missing, when the template has no idempotency table or the stack lacks an output', () => {
    const withoutIdempotency: CfnTemplate = {
      Resources: { AuditTableF00D: TEMPLATE.Resources.AuditTableF00D },
    };

    expect(() => stackTables(OUTPUTS, 'BookingsTableName', withoutIdempotency, BY_LOGICAL_ID)).toThrow(
      'bench: no idempotency table (partition key `id`, TTL `expiration`)',
    );
    expect(() => stackTables(OUTPUTS, 'BookingsTableName', undefined, BY_LOGICAL_ID)).toThrow('no idempotency table');
    expect(() => stackTables(OUTPUTS, 'OrdersTableName', TEMPLATE, BY_LOGICAL_ID)).toThrow(
      'bench: the stack has no output OrdersTableName',
    );
  });
});
