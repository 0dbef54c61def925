import { inboxKey } from '@exactly-once/runtime/aws/inbox-table';
import type { ConsumerSpec } from '@exactly-once/runtime/consumer-spec';
import { handlerFactory } from '@exactly-once/tools/simulation/world/consumers';
import { EFFECTS_TABLE } from '@exactly-once/tools/simulation/world/tables';
import { thingHappened } from '../exactly-once/fixtures/probe-events';
import { PROBE_SIMULATED_CONSUMERS, THINGS_TABLE } from '../exactly-once/fixtures/probe-simulation';
import { probeSimulationOptions, ProbeWorld } from './probe-world';
import { PROBE_AUDIT_SPEC as audit } from '../exactly-once/fixtures/probe-simulation-audit';

/**
 * The world is built from the consumer list it is given, so a consumer added to it is simulated
 * without editing the simulation: here the neutral probe domain's two consumers and a third one of
 * the generic entity effect, with a queue, an inbox and a provider of its own.
 */
const withAudit = [...PROBE_SIMULATED_CONSUMERS, audit];
const options = probeSimulationOptions({ seed: 3, intents: 40 });

test('a third consumer on the list gets its own queue, DLQ and function: poison sent to its queue is dead-lettered by its handler to its DLQ, under its name, and the verification judges that DLQ', async () => {
  const world = new ProbeWorld(options, withAudit);

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
  // Only the poison is there, and the third consumer is judged like the others: every invariant holds.
  expect(result.verification.violations).toEqual([]);
  expect(result.verification.appliedEffects[audit.name]).toBeGreaterThan(0);
});

test("the relay's routes name every consumer's simulated queue", () => {
  const world = new ProbeWorld(options, withAudit);

  const routes = world.routes.map((r) => [r.consumer, r.queueUrl, r.fifo, r.eventTypes]);

  expect(routes).toEqual(
    withAudit.map((spec) => [spec.name, world.consumers.get(spec.name)!.queue.url, spec.fifo, spec.eventTypes]),
  );
});

// The relay routes by the list and the ledger claims under the wiring's (the spec's) name: audit gets its own inbox.
test('a third consumer on the list is delivered every event it takes: its handler claims each in its own inbox', async () => {
  const world = new ProbeWorld(options, withAudit);

  await world.run();

  const happened = world.db
    .storedItems(THINGS_TABLE)
    .filter((item) => item.entity === 'THING')
    .map((thing) => inboxKey(audit.name, thingHappened(String(thing.thingId)).eventId).pk);
  const claims = new Set(world.db.storedItems(EFFECTS_TABLE).map((item) => String(item.pk)));
  expect(happened.length).toBeGreaterThan(0);
  expect(happened.filter((claim) => !claims.has(claim))).toEqual([]);
});

test('a consumer list the stack would refuse is refused by the world too, with the reason', () => {
  expect(() => new ProbeWorld(options, [...PROBE_SIMULATED_CONSUMERS, { ...audit, name: 'Audit' }])).toThrow(
    'consumer "Audit": a name is 2-32 lower-case letters',
  );
  expect(
    () => new ProbeWorld(options, [...PROBE_SIMULATED_CONSUMERS, { ...audit, eventTypes: ['ThingShipped'] }]),
  ).toThrow(`consumer "${audit.name}": takes "ThingShipped", which no producer writes`);
});

test('a consumer whose entry point exports no handler factory is refused, naming the module', () => {
  expect(() => handlerFactory({ name: 'audit', entry: 'packages/runtime/src/wiring/outbox-wiring.ts' })).toThrow(
    'consumer "audit": packages/runtime/src/wiring/outbox-wiring.ts exports no makeHandler(wiring)',
  );
});

test("outage windows fall on every provider a consumer of the list names, a new consumer's too", async () => {
  // Arrange
  const billing: ConsumerSpec = { ...audit, providers: ['billing-api'] };
  const world = new ProbeWorld(
    probeSimulationOptions({
      seed: 3,
      intents: 20,
      faults: { ...options.faults, providerOutages: 30, longOutageChance: 0 },
      keepTrace: Number.MAX_SAFE_INTEGER,
    }),
    [...PROBE_SIMULATED_CONSUMERS, billing],
  );

  // Act
  const result = await world.run();

  // Assert
  const hit = new Set(result.trace.flatMap((line) => /FAULT provider-outage: (\S+) until/.exec(line)?.slice(1) ?? []));
  const named = [...PROBE_SIMULATED_CONSUMERS, billing].flatMap((spec) => spec.providers ?? []);
  expect([...hit].sort()).toEqual([...new Set(named)].sort());
});
