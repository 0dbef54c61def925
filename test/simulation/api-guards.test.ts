import { failed } from '@exactly-once/tools/simulation/campaign';
import type { ApiIdempotency } from '@exactly-once/tools/simulation/world/api';
import { MECHANISM_GUARDS, type SimulationResult } from '@exactly-once/tools/simulation/world/world';
import { probeSimulationOptions, simulateProbe } from './probe-world';

/**
 * The API's idempotency layer broken (test-only, in the simulation's wiring of the mechanism's
 * `idempotentCommand`, here the probe domain's POST /things) must be caught within a bounded number
 * of seeds, with the default fault mix (crashes, lost answers, concurrent and sequential retries,
 * undos, keys reused with another body). Each test runs schedules 1, 2, ... until one violates the
 * invariant and checks that the same schedule with the layer intact holds every invariant.
 */
const ORDERS = 100;

async function firstSeedWhere(
  apiIdempotency: ApiIdempotency,
  violates: (r: SimulationResult) => boolean,
  maxSeeds: number,
) {
  for (let seed = 1; seed <= maxSeeds; seed++) {
    const broken = await simulateProbe(
      probeSimulationOptions({ intents: ORDERS, guards: { ...MECHANISM_GUARDS, apiIdempotency }, seed }),
    );
    if (violates(broken))
      return { seed, guarded: await simulateProbe(probeSimulationOptions({ intents: ORDERS, seed })) };
  }
  return undefined;
}

const replayViolation = (detail: RegExp) => (r: SimulationResult) =>
  r.verification.violations.some((v) => v.invariant === 'replay' && detail.test(v.detail));

test('without payload validation, a key sent again with another body is answered with the first entity: found within 2 seeds', async () => {
  const found = await firstSeedWhere('no-payload-validation', replayViolation(/different request bodies/), 2);

  expect(found?.seed).toBeLessThanOrEqual(2);
  expect(failed(found!.guarded)).toBe(false);
});

test('with the idempotency layer bypassed, a replay after an undo answers with the entity as it is now: found within 2 seeds', async () => {
  const found = await firstSeedWhere('bypassed', replayViolation(/different 201 bodies/), 2);

  expect(found?.seed).toBeLessThanOrEqual(2);
  expect(failed(found!.guarded)).toBe(false);
});
