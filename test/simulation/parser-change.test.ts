import { failed } from '@exactly-once/tools/simulation/campaign';
import { parsedAsDeployed, PARSER_CHANGE_FIELD } from '@exactly-once/tools/simulation/world/parser-change';
import { DEFAULT_FAULTS, MECHANISM_GUARDS, type SimulationResult } from '@exactly-once/tools/simulation/world/world';
import { probeSimulationOptions, simulateProbe, type ProbeSimulationOptions } from './probe-world';

/**
 * A deploy mid-run that changes the consumers' parse (the `parserChangeAtSeconds` fault: every payload
 * gains a default field): events claimed before it and redelivered after (crashes, SQS duplicates,
 * provider failures) must stay duplicates, their owed provider calls made. With the claims
 * fingerprinting the parse instead of the message body (`sentFingerprint` off), such a copy reads as
 * another event under its id: dead-lettered as EventIdReused, its owed call never made.
 */
const ORDERS = 100;
/** A third of the way into the arrivals (100 at 20 a second): claims on both sides of the change. */
const PARSER_CHANGE: Partial<ProbeSimulationOptions> = {
  faults: { ...DEFAULT_FAULTS, providerFailure: 0.2, parserChangeAtSeconds: 2 },
};

const eventIdReused = (r: SimulationResult) =>
  r.verification.deadLetters.some((d) => d.cause === 'EventIdReused') ||
  r.verification.violations.some((v) => v.invariant === 'event-id-reused');

test('the changed parse gives the payload its default from the change on; before it, the event as parsed', () => {
  const event = { eventId: 'e-1', payload: { amount: 1 } };

  expect(parsedAsDeployed(event, 1_999, 2)).toBe(event);
  expect(parsedAsDeployed(event, 2_000, 2)).toEqual({
    eventId: 'e-1',
    payload: { [PARSER_CHANGE_FIELD]: 'default', amount: 1 },
  });
  expect(parsedAsDeployed(event, 9_999_999)).toBe(event);
});

test('with the claims fingerprinting the parse, a parser change mid-run turns redelivered events into EventIdReused: found within 3 seeds; with the body fingerprint every invariant holds', async () => {
  let found: { seed: number; guarded: SimulationResult } | undefined;
  for (let seed = 1; seed <= 3 && found === undefined; seed++) {
    const broken = await simulateProbe(
      probeSimulationOptions({
        intents: ORDERS,
        ...PARSER_CHANGE,
        guards: { ...MECHANISM_GUARDS, sentFingerprint: false },
        seed,
      }),
    );
    if (eventIdReused(broken))
      found = {
        seed,
        guarded: await simulateProbe(probeSimulationOptions({ intents: ORDERS, ...PARSER_CHANGE, seed })),
      };
  }

  expect(found?.seed).toBeLessThanOrEqual(3);
  expect(eventIdReused(found!.guarded)).toBe(false);
  expect(found!.guarded.verification.violations).toEqual([]);
  expect(failed(found!.guarded)).toBe(false);
});
