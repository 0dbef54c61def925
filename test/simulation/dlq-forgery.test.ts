import { failed } from '@exactly-once/tools/simulation/campaign';
import { dlqForgeries, FORGED_EVENT_ID_SUFFIX } from '@exactly-once/tools/simulation/world/dlq-forgery';
import { DEFAULT_FAULTS, MECHANISM_GUARDS, type SimulationResult } from '@exactly-once/tools/simulation/world/world';
import { thingHappened } from '../exactly-once/fixtures/probe-events';
import { probeSimulationOptions, simulateProbe, type ProbeSimulationOptions } from './probe-world';

/**
 * Forged messages dropped into each consumer's DLQ a minute before the operator's redrive (the
 * `dlqForgeries` fault): a known eventId with other content, and a new eventId one version newer. The
 * DLQs' sender policy refuses the forger; without it (`dlqSenderPolicy` off) the redrive moves both into
 * the guarded source queue, and the verdict must find them: the known id as EventIdReused, the new one as
 * an effect nobody produced.
 */
const ORDERS = 60;
const FORGERY: Partial<ProbeSimulationOptions> = { faults: { ...DEFAULT_FAULTS, dlqForgeries: 1 } };

const run = (seed: number, dlqSenderPolicy: boolean) =>
  simulateProbe(
    probeSimulationOptions({ intents: ORDERS, ...FORGERY, guards: { ...MECHANISM_GUARDS, dlqSenderPolicy }, seed }),
  );

const invariants = (r: SimulationResult) => r.verification.violations.map((v) => v.invariant);

test('the forgeries of an event: its eventId with other content, and a new eventId one version newer', () => {
  const event = thingHappened('thing-1', { payload: { amount: 5 } });

  const [knownId, newId] = dlqForgeries(event, (e) => ({ ...e, payload: { amount: 6 } }));

  expect(knownId).toEqual({ ...event, payload: { amount: 6 } });
  expect(newId).toEqual({
    ...event,
    payload: { amount: 6 },
    eventId: `${event.eventId}${FORGED_EVENT_ID_SUFFIX}`,
    version: event.version + 1,
  });
});

test('without the DLQ sender policy, forgeries redriven from the DLQs are found (EventIdReused, an effect nobody produced) on seeds 1 and 2; with it every invariant holds', async () => {
  for (const seed of [1, 2]) {
    const open = await run(seed, false);
    const guarded = await run(seed, true);

    expect(invariants(open)).toEqual(expect.arrayContaining(['event-id-reused', 'unproduced-effect']));
    expect(guarded.faults['forged-dlq-send-denied']).toBeGreaterThan(0);
    expect(guarded.verification.violations).toEqual([]);
    expect(failed(guarded)).toBe(false);
  }
});
