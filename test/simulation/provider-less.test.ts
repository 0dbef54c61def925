import { EACH_EVENT_ONCE } from '@exactly-once/tools/proof-kit/verify';
import { PROBE_SIMULATED_CONSUMERS } from '../exactly-once/fixtures/probe-simulation';
import { PROVIDER_LESS_SPEC } from './provider-less-consumer';
import { probeSimulationOptions, ProbeWorld } from './probe-world';

/**
 * A consumer whose spec names no provider (`spec.providers` absent): the audit owes a provider call
 * only where the spec names a provider, and checks every consumer's inbox claims either way.
 */
const consumers = [...PROBE_SIMULATED_CONSUMERS, PROVIDER_LESS_SPEC];

test('a consumer that names no provider owes no provider call: its events applied once under their claims, every invariant holds', async () => {
  const world = new ProbeWorld(probeSimulationOptions({ seed: 1, intents: 40 }), consumers);

  const result = await world.run();

  expect(result.verification.appliedEffects[PROVIDER_LESS_SPEC.name]).toBeGreaterThan(0);
  expect(result.verification.violations).toEqual([]);
});

test('a consumer that names no provider keeps the inbox-claim check: without the claim, its events are reported unclaimed', async () => {
  const options = probeSimulationOptions({ seed: 1, intents: 40 });
  const world = new ProbeWorld({ ...options, guards: { ...options.guards, inboxClaim: false } }, consumers);

  const result = await world.run();

  const unclaimed = result.verification.violations.filter(
    (v) => v.invariant === EACH_EVENT_ONCE && v.detail.startsWith(`${PROVIDER_LESS_SPEC.name}: `),
  );
  expect(unclaimed.length).toBeGreaterThan(0);
  // And no provider call is owed from it, with the claims gone too.
  expect(result.verification.violations.map((v) => v.detail).join('\n')).not.toContain(
    `under key ${PROVIDER_LESS_SPEC.name}`,
  );
});
