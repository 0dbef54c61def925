import { inboxKey } from '../../lambdas/exactly-once/aws/inbox-table';
import { CONSUMERS } from '../../lambdas/shop/consumers';
import { orderPlacedEventId } from '../../lambdas/shop/domain/order';
import type { ConsumerSpec } from '../../lambdas/exactly-once/consumer-spec';
import { parseRoutes } from '../../lambdas/exactly-once/outbox/routes';
import { ENV } from '../../lambdas/exactly-once/env-names';
import { unusedConsumerName } from '../support/consumer-list';
import { handlerFactory } from '../../tools/simulation/world/consumers';
import { ORDERS_TABLE } from '../../tooling/shop/simulation/api';
import { EFFECTS_TABLE } from '../../tools/simulation/world/tables';
import { simulationOptions, World } from '../../tooling/shop/simulation/world';

/**
 * The world is built from the consumer list (lambdas/shop/consumers.ts), so a
 * consumer added to it is simulated without editing the simulation. The third
 * consumer here reuses the loyalty entry point: no other handler exists yet.
 * It is named like no consumer on the list.
 */
const audit: ConsumerSpec = {
  name: unusedConsumerName('audit'),
  fifo: false,
  eventTypes: ['OrderPlaced'],
  entry: 'lambdas/shop/entry-points/loyalty-consumer.ts',
  batchSize: 10,
  batchingWindowSeconds: 1,
  maxConcurrency: 10,
};
const withAudit = [...CONSUMERS, audit];
const options = simulationOptions({ seed: 3, orders: 40 });

test('a third consumer on the list gets its own queue, DLQ and function: poison sent to its queue is dead-lettered by its handler to its DLQ, under its name, and the verification judges that DLQ', async () => {
  const world = new World(options, withAudit);

  const result = await world.run();

  expect(result.faults['poison-message']).toBe(2);
  expect(result.verification.deadLetters).toContainEqual({
    queue: `${audit.name} DLQ`,
    cause: 'poison (SchemaViolation)',
    count: 2,
    expected: true,
  });
  // Copied by the handler (not moved by SQS), with the consumer's name from its wiring.
  const copies = world.consumers.get(audit.name)!.deadLetterQueue.all();
  expect(copies.map((m) => m.attributes.consumer)).toEqual([audit.name, audit.name]);
  // Only the poison is there. (Other invariants are not this list's: a second loyalty handler credits points twice.)
  expect(result.verification.violations.filter((v) => v.invariant === 'dlq')).toEqual([]);
});

test("the relay's routes name every consumer's simulated queue, in the world and in the environment the handler modules load with", () => {
  const world = new World(options, withAudit);

  const routes = world.routes.map((r) => [r.consumer, r.queueUrl, r.fifo, r.eventTypes]);
  const loaded = parseRoutes(process.env[ENV.consumerRoutes]!, ENV.consumerRoutes);

  expect(routes).toEqual(
    withAudit.map((spec) => [spec.name, world.consumers.get(spec.name)!.queue.url, spec.fifo, spec.eventTypes]),
  );
  expect(loaded).toEqual(world.routes.filter((r) => r.consumer !== audit.name));
});

// The relay routes by the list and the ledger claims under the wiring's (the spec's) name: audit gets its own inbox.
test('a third consumer on the list is delivered every OrderPlaced: its handler claims each in its own inbox', async () => {
  const world = new World(options, withAudit);

  await world.run();

  const placed = world.db
    .storedItems(ORDERS_TABLE)
    .filter((item) => item.entity === 'ORDER')
    .map((order) => inboxKey(audit.name, orderPlacedEventId(String(order.orderId)), String(order.caller)).pk);
  const claims = new Set(world.db.storedItems(EFFECTS_TABLE).map((item) => String(item.pk)));
  expect(placed.length).toBeGreaterThan(0);
  expect(placed.filter((claim) => !claims.has(claim))).toEqual([]);
});

test('a consumer list the stack would refuse is refused by the world too, with the reason', () => {
  expect(() => new World(options, [...CONSUMERS, { ...audit, name: 'Audit' }])).toThrow(
    'consumer "Audit": a name is 2-32 lower-case letters',
  );
  expect(() => new World(options, [...CONSUMERS, { ...audit, eventTypes: ['OrderShipped'] }])).toThrow(
    `consumer "${audit.name}": takes "OrderShipped", which no producer writes`,
  );
});

test('a consumer whose entry point exports no handler factory is refused, naming the module', () => {
  expect(() => handlerFactory({ name: 'audit', entry: 'lambdas/exactly-once/wiring/relay-handler.ts' })).toThrow(
    'consumer "audit": lambdas/exactly-once/wiring/relay-handler.ts exports no makeHandler(wiring)',
  );
});

test("outage windows fall on every provider a consumer of the list names, a new consumer's too", async () => {
  // Arrange
  const billing: ConsumerSpec = { ...audit, providers: ['billing-api'] };
  const world = new World(
    simulationOptions({
      seed: 3,
      orders: 20,
      faults: { ...options.faults, providerOutages: 30, longOutageChance: 0 },
      keepTrace: Number.MAX_SAFE_INTEGER,
    }),
    [...CONSUMERS, billing],
  );

  // Act
  const result = await world.run();

  // Assert
  const hit = new Set(result.trace.flatMap((line) => /FAULT provider-outage: (\S+) until/.exec(line)?.slice(1) ?? []));
  const named = [...CONSUMERS, billing].flatMap((spec) => spec.providers ?? []);
  expect([...hit].sort()).toEqual([...new Set(named)].sort());
});
