import { failed } from '@exactly-once/tools/simulation/campaign';
import { DEFAULT_FAULTS, MECHANISM_GUARDS, type SimulationResult } from '@exactly-once/tools/simulation/world/world';
import { probeSimulationOptions, simulateProbe, type ProbeSimulationOptions } from './probe-world';

/**
 * Two tenants' events under one eventId (the `sharedEventIds` fault: the probe's clients 2k and 2k+1, each
 * event under its own caller as tenant). Their inbox claims differ (the tenant is in the inbox key); with
 * the tenant left out of the provider key (`tenantInProviderKey` off) their calls meet under one key with
 * two payloads, which the provider refuses (422, dead-lettered as ProviderRejected): a call lost.
 */
const ORDERS = 60;
const SHARED: Partial<ProbeSimulationOptions> = { faults: { ...DEFAULT_FAULTS, sharedEventIds: 1 } };

const run = (seed: number, tenantInProviderKey: boolean) =>
  simulateProbe(
    probeSimulationOptions({ intents: ORDERS, ...SHARED, guards: { ...MECHANISM_GUARDS, tenantInProviderKey }, seed }),
  );

/** A call refused with 422 (dead-lettered) or never made under the key its claim owes it under. */
const callLost = (r: SimulationResult) =>
  r.verification.violations.some(
    (v) => v.detail.includes('ProviderRejected') || v.detail.startsWith('no provider call under key'),
  );

test('with the tenant left out of the provider key, two tenants sharing eventIds lose calls to 422: found on seeds 1 and 2; with it every invariant holds', async () => {
  for (const seed of [1, 2]) {
    const keyless = await run(seed, false);
    const guarded = await run(seed, true);

    expect(callLost(keyless)).toBe(true);
    expect(guarded.verification.violations).toEqual([]);
    expect(failed(guarded)).toBe(false);
  }
});
