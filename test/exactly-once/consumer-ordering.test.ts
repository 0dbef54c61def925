import { validateConsumerSpecs, type ConsumerSpec } from '@exactly-once/runtime';
import { outboxRoutes } from '@exactly-once/cdk/parts';
import { PROBE_CONSUMERS, PROBE_EVENT_TYPES, PROBE_FIFO_SPEC, PROBE_SPEC } from './fixtures/probe-spec';

/**
 * The ordering a consumer's effect relies on, checked on its spec: the generic effect's version guard
 * (`staleGuard: 'entity-version'`) drops an event whose version is not above its entity's last applied
 * one, so a queue that can hand it an entity's versions out of order loses events without an error.
 */

const validate = (spec: ConsumerSpec) => () => validateConsumerSpecs([spec], PROBE_EVENT_TYPES);

test("the probe's own specs pass: the generic effect on a FIFO ordered by entity, and on a standard queue taking one type", () => {
  const specs = PROBE_CONSUMERS;

  const check = () => validateConsumerSpecs(specs, PROBE_EVENT_TYPES);

  expect(check).not.toThrow();
  expect(specs.map((s) => s.staleGuard)).toEqual(['entity-version', 'entity-version']);
});

test('the generic effect on a standard queue taking several event types of one entity is refused: a reordered older version would be dropped', () => {
  const spec: ConsumerSpec = { ...PROBE_SPEC, eventTypes: ['ThingHappened', 'ThingUndone'] };

  const check = validate(spec);

  expect(check).toThrow(
    /consumer "probe": the generic effect's version guard \(staleGuard 'entity-version'\) on a standard queue that takes ThingHappened, ThingUndone: .*dropped as stale.*Make it FIFO/,
  );
});

test('the same list is accepted once the queue is FIFO, or with an effect of its own', () => {
  const fifo: ConsumerSpec = {
    ...PROBE_SPEC,
    fifo: true,
    batchingWindowSeconds: 0,
    eventTypes: [...PROBE_EVENT_TYPES],
  };
  const own: ConsumerSpec = { ...PROBE_SPEC, eventTypes: [...PROBE_EVENT_TYPES], staleGuard: undefined };

  expect(validate(fifo)).not.toThrow();
  expect(validate(own)).not.toThrow();
});

test("the generic effect on a FIFO ordered by the envelope's orderingKey is refused: its versions are per entity, not per ordering key", () => {
  const spec: ConsumerSpec = { ...PROBE_FIFO_SPEC, orderBy: 'ordering-key' };

  const check = validate(spec);

  expect(check).toThrow(
    /consumer "probe-fifo": the generic effect's version guard .* compares versions per entity, but this consumer is ordered by the envelope's orderingKey \(orderBy 'ordering-key'\): its versions are not per ordering key/,
  );
});

test('a FIFO ordered by ordering key with an effect of its own passes; on a standard queue orderBy is refused', () => {
  const own: ConsumerSpec = { ...PROBE_FIFO_SPEC, orderBy: 'ordering-key', staleGuard: undefined };
  const standard: ConsumerSpec = { ...PROBE_SPEC, orderBy: 'ordering-key', staleGuard: undefined };

  expect(validate(own)).not.toThrow();
  expect(validate(standard)).toThrow(
    /consumer "probe": orderBy 'ordering-key' names a FIFO message group; a standard queue has none/,
  );
});

test("the relay's route carries a FIFO spec's orderBy 'ordering-key', and nothing for a spec ordered by entity", () => {
  const byKey: ConsumerSpec = { ...PROBE_FIFO_SPEC, name: 'ledger', orderBy: 'ordering-key', staleGuard: undefined };
  const pipelines = [PROBE_FIFO_SPEC, byKey].map((spec) => ({
    spec,
    queues: { queue: { queueUrl: `https://sqs.example/${spec.name}.fifo` } },
  })) as unknown as Parameters<typeof outboxRoutes>[0];

  const routes = outboxRoutes(pipelines);

  expect(routes.map((r) => [r.consumer, r.orderBy])).toEqual([
    ['probe-fifo', undefined],
    ['ledger', 'ordering-key'],
  ]);
  expect(Object.keys(routes[0])).not.toContain('orderBy');
});

test('a ledger the mechanism does not have is refused with the two it has', () => {
  const spec = { ...PROBE_FIFO_SPEC, ledger: 'outbox' } as unknown as ConsumerSpec;

  const check = validate(spec);

  expect(check).toThrow(
    /consumer "probe-fifo": ledger is 'inbox' \(an inbox claim per event\) or 'sequenced' \(the claim on the event's entity item\), not "outbox"/,
  );
});

test("the sequenced ledger keeps the version guard's ordering rule: refused on a standard queue taking several types, accepted on a FIFO by entity", () => {
  const standard: ConsumerSpec = {
    ...PROBE_SPEC,
    staleGuard: undefined,
    ledger: 'sequenced',
    eventTypes: [...PROBE_EVENT_TYPES],
  };
  const fifo: ConsumerSpec = { ...PROBE_FIFO_SPEC, staleGuard: undefined, ledger: 'sequenced' };
  const inbox: ConsumerSpec = { ...standard, ledger: 'inbox' };

  expect(validate(standard)).toThrow(
    /consumer "probe": the sequenced ledger's sequence condition \(ledger 'sequenced'\) on a standard queue that takes ThingHappened, ThingUndone: .*dropped as stale/,
  );
  expect(validate(fifo)).not.toThrow();
  expect(validate(inbox)).not.toThrow();
});
