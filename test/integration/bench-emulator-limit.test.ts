import { PROBE_CONSUMERS } from '../exactly-once/fixtures/probe-spec';
import type { ProofDomain } from '@exactly-once/tools/proof-kit/domain';
import { entityPath, limitPlan, measureEmulatorLimit } from '@exactly-once/tools/bench/emulator-limit';
import { appliedEffects } from '@exactly-once/tools/bench/effects';
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
/** The neutral fixture's consumers, each naming a provider (as a consumer that calls one declares it). */
const CALLING = PROBE_CONSUMERS.map((spec) => ({ ...spec, providers: [spec.name] }));
/** One consumer calling a provider, one calling none (a ledger-only effect: its spec names no provider). */
const MIXED = [CALLING[0], PROBE_CONSUMERS[1]];

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
        consumers: CALLING,
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

  test('a consumer whose spec names no provider is priced as its claim + effect transaction alone', async () => {
    const stack = await createBenchTables();
    const label = (table: string) => Object.entries(stack.tables).find(([, name]) => name === table)?.[0] ?? table;
    try {
      const limit = await measureEmulatorLimit({
        endpoint: ENDPOINT(),
        region: 'us-east-1',
        tables: stack.tables,
        domain: PROBE_PROOF,
        consumers: MIXED,
        label,
        orders: 4,
        concurrency: 2,
      });

      // One provider write and one done-mark: the calling consumer's; the other makes its transaction only.
      expect(limit.mix).toBe(
        'PutItem on idempotency x1, TransactWriteItems(2 items) on entities x1, UpdateItem on idempotency x1, ' +
          'UpdateItem on entities x1, TransactWriteItems(3 items) on effects x2, UpdateItem on providerLog x1, ' +
          'UpdateItem on effects x1',
      );
      expect(limit.roundTripsPerOrder).toBe(8);
    } finally {
      await stack.drop();
    }
  }, 60_000);

  test("each consumer's effect is found from its inbox claim: the calling one's once its call is done, the other's at its claim", async () => {
    const stack = await createBenchTables();
    const client = benchTestClient();
    const plan = limitPlan(PROBE_PROOF, 'claims', 2);
    const path = entityPath({
      endpoint: ENDPOINT(),
      region: 'us-east-1',
      tables: stack.tables,
      domain: PROBE_PROOF,
      consumers: MIXED,
      plan,
    });
    try {
      await path.run(0); // the second entity of the plan is never run: no effect of it may be found
      const [ran, never] = plan.map((p) =>
        PROBE_PROOF.createdEventIdOf(PROBE_PROOF.entityIdOf(p.caller, p.idempotencyKey!)),
      );

      const applied = await appliedEffects(client, stack.tables.effects, MIXED, [
        { eventId: ran, tenant: plan[0].caller },
        { eventId: never, tenant: plan[1].caller },
      ]);

      expect([...applied.keys()].sort()).toEqual([`${MIXED[0].name}:${ran}`, `${MIXED[1].name}:${ran}`].sort());
      for (const at of applied.values()) expect(at).toBeGreaterThan(Date.now() - 60_000);
    } finally {
      path.destroy();
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
