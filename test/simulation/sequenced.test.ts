import { SEQUENCE_ATTRIBUTES, sequencedEntityKey } from '@exactly-once/runtime/aws/sequenced-ledger';
import { EACH_EVENT_ONCE } from '@exactly-once/tools/proof-kit/verify';
import { EFFECTS_TABLE } from '@exactly-once/tools/simulation/world/tables';
import { PROBE_SIMULATED_CONSUMERS } from '../exactly-once/fixtures/probe-simulation';
import { probeSimulationOptions, ProbeWorld } from './probe-world';
import { REFUSE_FIRST_HAPPENED, SEQUENCED_SPEC } from './sequenced-consumer';

/**
 * A consumer on the sequenced ledger (ConsumerSpec.ledger `sequenced`, aws/sequenced-ledger.ts) run by the
 * same harness, faults and audit as the inbox consumers beside it: the audit reads its claims from its
 * entity items (proof-kit/sequenced-claims.ts). Its guard `sequenceCondition` off drops the claim's
 * condition, and the audit must fail.
 */

const consumers = [...PROBE_SIMULATED_CONSUMERS, SEQUENCED_SPEC];
const claimsOf = (detail: string) => detail.startsWith(`${SEQUENCED_SPEC.name}: `) && detail.includes(' claims for ');

afterEach(() => {
  REFUSE_FIRST_HAPPENED.on = false;
  REFUSE_FIRST_HAPPENED.refused.clear();
});

test('a sequenced consumer beside the inbox ones, under the default faults: its events applied once, every invariant holds', async () => {
  const world = new ProbeWorld(probeSimulationOptions({ seed: 1, intents: 60 }), consumers);

  const result = await world.run();

  expect(result.verification.appliedEffects[SEQUENCED_SPEC.name]).toBeGreaterThan(0);
  expect(result.verification.violations).toEqual([]);
});

test('without the sequence condition (guard sequenceCondition off), a redelivered event is claimed twice: the audit fails within 3 seeds', async () => {
  const runs = [];
  for (let seed = 1; seed <= 3; seed++) {
    const options = probeSimulationOptions({ seed, intents: 60 });
    const broken = new ProbeWorld({ ...options, guards: { ...options.guards, sequenceCondition: false } }, consumers);
    runs.push(await broken.run());
    if (runs.at(-1)!.verification.violations.some((v) => v.invariant === EACH_EVENT_ONCE && claimsOf(v.detail))) break;
  }

  const found = runs
    .at(-1)!
    .verification.violations.filter((v) => v.invariant === EACH_EVENT_ONCE && claimsOf(v.detail));
  expect(found.length).toBeGreaterThan(0);
  // The inbox consumers beside it keep their claims: only the sequenced one is broken.
  expect(
    runs
      .at(-1)!
      .verification.violations.map((v) => v.detail)
      .join('\n'),
  ).not.toMatch(/^probe(-fifo)?: /m);
});

test('named case: a dead-lettered head v, then v+1 applied, then a redrive of v: v is judged stale, never applied, never called, and the audit passes', async () => {
  // Every ThingHappened (v1) is refused once with a PermanentError: it goes to the DLQ and frees its FIFO
  // group, so the thing's ThingUndone (v2), where the client undoes it, is applied first. The operator's
  // redrive an hour later brings v1 back. The ledger's sequence condition refuses it (seq 2 > 1) and the
  // refusal, read from the item in the same round trip, is judged stale: acknowledged, no effect, no
  // provider call, since v2 superseded it. A thing nobody undid gets its v1 applied on the redrive.
  REFUSE_FIRST_HAPPENED.on = true;
  const world = new ProbeWorld(
    { ...probeSimulationOptions({ seed: 1, intents: 40 }), keepTrace: 1_000_000 },
    consumers,
  );

  const result = await world.run();

  const items = world.db.items(EFFECTS_TABLE);
  const itemOf = (thingId: string) =>
    items.find((i) => i.pk === sequencedEntityKey(SEQUENCED_SPEC.name, { entityId: thingId }).pk);
  const heads = [...REFUSE_FIRST_HAPPENED.refused].map((eventId) => eventId.replace(/:happened$/, ''));
  const undone = heads.filter((thingId) => itemOf(thingId)?.[SEQUENCE_ATTRIBUTES.eventId] === `${thingId}:undone`);
  const kept = heads.filter((thingId) => !undone.includes(thingId));
  expect(undone.length).toBeGreaterThan(0);
  expect(kept.length).toBeGreaterThan(0);
  for (const thingId of undone) {
    // v2 only: one claim, one application; v1's call was never sent.
    expect(itemOf(thingId)).toMatchObject({ seq: 2, [SEQUENCE_ATTRIBUTES.claims]: 1, appliedCount: 1 });
    expect(result.trace.some((line) => line.includes(`probe-seq.send probe-seq:${thingId}:happened`))).toBe(false);
  }
  for (const thingId of kept) {
    expect(itemOf(thingId)).toMatchObject({ seq: 1, [SEQUENCE_ATTRIBUTES.claims]: 1, appliedCount: 1 });
    expect(result.trace.some((line) => line.includes(`probe-seq.send probe-seq:${thingId}:happened`))).toBe(true);
  }
  expect(result.faults['dlq-redrive']).toBe(1);
  expect(result.verification.violations).toEqual([]);
});
