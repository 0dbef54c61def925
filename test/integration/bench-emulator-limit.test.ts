import { PROBE_CONSUMERS } from '../exactly-once/fixtures/probe-spec';
import type { ProofDomain } from '@exactly-once/tools/proof-kit/domain';
import { entityPath, limitPlan, measureEmulatorLimit } from '@exactly-once/tools/bench/emulator-limit';
import { outboxItemsOf } from '@exactly-once/tools/bench/hops';
import { benchTestClient, createBenchTables } from '../support/bench-tables';

/**
 * The bench's emulator limit on any domain: the mechanism's path for one entity of the proof domain's
 * plan (idempotent create with its outbox item, the relay's dispatched mark, then the generic entity
 * effect once per consumer the example declares), against DynamoDB Local, with the neutral fixture's
 * two consumers and a domain that is only a plan and its ids.
 */
const PROBE_PROOF = {
  entityNoun: 'things',
  entityNounSingular: 'thing',
  entityTableOutput: 'ThingsTableName',
  isEntityOfRun: () => true,
  idOf: (entity) => String(entity.thingId),
  entityIdOf: (caller, key) => `thing-${caller.split('/').pop()}-${key}`,
  createdEventIdOf: (thingId) => `${thingId}:happened`,
  buildPlan: (_random, options) =>
    Array.from({ length: options.intents }, (_, n) => ({
      index: n,
      op: 'new' as const,
      caller: options.callers[0],
      method: 'POST' as const,
      path: '/things',
      idempotencyKey: `${options.runId}-${n}`,
      body: { note: `${options.runId}-note-${n}` },
    })),
  producedEvents: () => [],
  checkEffects: () => ({ violations: [], summary: '' }),
} satisfies ProofDomain;

const ENDPOINT = () => process.env.TEST_DYNAMODB_ENDPOINT!;

describe('bench emulator limit', () => {
  test("one entity's mix: the create's lock, transaction and completion, the dispatched mark, one claim + effect, one provider write and one done-mark per consumer", async () => {
    const stack = await createBenchTables();
    const client = benchTestClient();
    const label = (table: string) => Object.entries(stack.tables).find(([, name]) => name === table)?.[0] ?? table;
    try {
      const limit = await measureEmulatorLimit({
        endpoint: ENDPOINT(),
        region: 'us-east-1',
        tables: stack.tables,
        domain: PROBE_PROOF,
        consumers: PROBE_CONSUMERS,
        label,
        orders: 8,
        concurrency: 4,
      });

      // Each consumer's transaction: the claim, one ConditionCheck under the key shape an older release
      // claimed a tenant's event under (the bench's events carry a tenant), and the effect.
      expect(limit.mix).toBe(
        'PutItem on idempotency x1, TransactWriteItems(2 items) on entities x1, UpdateItem on idempotency x1, ' +
          'UpdateItem on entities x1, TransactWriteItems(3 items) on effects x2, UpdateItem on providerLog x2, ' +
          'UpdateItem on effects x2',
      );
      expect(limit.createOrderRoundTrips).toBe(3);
      expect(limit.roundTripsPerOrder).toBe(10);
      expect(limit.ordersPerSecond).toBeGreaterThan(0);
    } finally {
      client.destroy();
      await stack.drop();
    }
  }, 60_000);

  test("the outbox item of an entity it ran is found by its event id: dispatched, with the caller as the event's tenant", async () => {
    const stack = await createBenchTables();
    const client = benchTestClient();
    const plan = limitPlan(PROBE_PROOF, 'outbox', 1);
    const path = entityPath({
      endpoint: ENDPOINT(),
      region: 'us-east-1',
      tables: stack.tables,
      domain: PROBE_PROOF,
      consumers: PROBE_CONSUMERS,
      plan,
    });
    try {
      await path.run(0);
      const eventId = PROBE_PROOF.createdEventIdOf(PROBE_PROOF.entityIdOf(plan[0].caller, plan[0].idempotencyKey!));

      const found = await outboxItemsOf({ dynamodb: client }, stack.tables.entities, [eventId, 'no-such-event']);

      expect([...found.keys()]).toEqual([eventId]);
      expect(found.get(eventId)?.dispatchedAt).toBeGreaterThan(Date.now() - 60_000);
      expect(found.get(eventId)?.tenant).toBe(plan[0].caller);
      expect(found.get(eventId)?.eventBytes).toBeGreaterThan(100);
    } finally {
      path.destroy();
      client.destroy();
      await stack.drop();
    }
  }, 60_000);
});
