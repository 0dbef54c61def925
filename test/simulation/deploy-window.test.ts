import { failed } from '@exactly-once/tools/simulation/campaign';
import {
  ALL_GUARDS,
  FULFILMENT_WITHOUT_LEGACY_READ,
  DEFAULT_FAULTS,
  simulate,
  simulationOptions,
  type Guards,
  type SimulationOptions,
  type SimulationResult,
} from '../../tooling/shop/simulation/world';

/**
 * A deploy mid-run (the `deployWindowSeconds` fault): the shop's consumers run the previous release
 * (key shape 1: no tenant in the inbox key or the provider key) until each one's function is replaced
 * at a time drawn in the window; events claimed before a switch come back after it (crashes, SQS
 * duplicates, provider failures and outages). The shop's events carry a tenant, so their keys differ
 * between the shapes. Without the legacy lookup (`legacyKeyLookup` off: this release finds claims under
 * its own shape only) such an event is applied again, and its call made again under another key.
 * Fulfilment's previous release is the inbox ledger (tooling/shop/simulation/fulfilment-releases.ts): this
 * release finishes the orders it began there (its legacy read), which a release reading none (`'off'`)
 * reserves again.
 */
const ORDERS = 60;
/** 60 orders arrive over 3 s: the window runs from the first arrivals into the retries. */
const DEPLOY: Partial<SimulationOptions> = {
  faults: { ...DEFAULT_FAULTS, providerFailure: 0.2, deployWindowSeconds: [1, 20] },
};

const run = (seed: number, guards: Partial<Guards> = {}) =>
  simulate(simulationOptions({ intents: ORDERS, ...DEPLOY, guards: { ...ALL_GUARDS, ...guards }, seed }));

const appliedTwice = (r: SimulationResult) =>
  r.verification.violations.some(
    (v) => v.detail.includes('key shapes') || v.detail.startsWith('unexpected provider call under key'),
  );

test('without the legacy key lookup, a deploy mid-run applies events the previous release claimed again: found within 3 seeds; with it every invariant holds', async () => {
  let found: { seed: number; guarded: SimulationResult } | undefined;
  for (let seed = 1; seed <= 3 && found === undefined; seed++)
    if (appliedTwice(await run(seed, { legacyKeyLookup: false }))) found = { seed, guarded: await run(seed) };

  expect(found?.seed).toBeLessThanOrEqual(3);
  expect(found!.guarded.verification.violations).toEqual([]);
  expect(failed(found!.guarded)).toBe(false);
});

/** Stock reserved beyond what the orders' places and cancels account for: an order reserved twice, or kept. */
const stockWrong = (r: SimulationResult) => r.verification.violations.some((v) => v.invariant === 'reserved');

test("without fulfilment's legacy read, a deploy mid-run reserves again the stock of orders the previous release's inbox ledger began: found within 3 seeds; with it every invariant holds", async () => {
  const unread = (seed: number) =>
    simulate(
      simulationOptions({ intents: ORDERS, ...DEPLOY, guards: ALL_GUARDS, seed }),
      FULFILMENT_WITHOUT_LEGACY_READ,
    );
  let found: { seed: number; guarded: SimulationResult } | undefined;
  for (let seed = 1; seed <= 3 && found === undefined; seed++)
    if (stockWrong(await unread(seed))) found = { seed, guarded: await run(seed) };

  expect(found?.seed).toBeLessThanOrEqual(3);
  expect(found!.guarded.verification.violations).toEqual([]);
  expect(failed(found!.guarded)).toBe(false);
});
