import { failed } from './campaign';
import {
  ALL_GUARDS,
  DEFAULT_FAULTS,
  simulate,
  simulationOptions,
  type SimulationOptions,
  type SimulationResult,
} from './world/world';

/**
 * Each guard switched off (test-only) must be caught within a bounded number of
 * seeds: the simulation is only worth its green runs if it turns red when a
 * guard is missing. Every test runs schedules 1, 2, ... until one violates an
 * invariant and checks that the first violation is the one the guard prevents.
 */
const ORDERS = 100;
const noVersionCheck = { ...ALL_GUARDS, versionCheck: false };

async function firstViolatingSeed(overrides: Partial<SimulationOptions>, maxSeeds: number) {
  for (let seed = 1; seed <= maxSeeds; seed++) {
    const result = await simulate(simulationOptions({ orders: ORDERS, ...overrides, seed }));
    if (failed(result)) return { seed, invariants: new Set(result.verification.violations.map((v) => v.invariant)) };
  }
  return undefined;
}

test('without the inbox claim, a redelivered event is applied twice: found within 3 seeds', async () => {
  const found = await firstViolatingSeed({ guards: { ...ALL_GUARDS, inboxClaim: false } }, 3);

  expect(found?.invariants).toContain('points');
});

test('with the inbox claim keyed on the SQS messageId, a resent or republished event is applied twice: found within 5 seeds', async () => {
  const found = await firstViolatingSeed({ guards: { ...ALL_GUARDS, dedupeOn: 'messageId' } }, 5);

  expect(found?.invariants).toContain('points');
});

test('without the fulfilment version check, a cancel that overtakes its dead-lettered place releases stock never reserved: found within 5 seeds', async () => {
  // Conflict storms dead-letter some OrderPlaced messages before their reserve
  // commits, so the order's OrderCancelled is applied first. One SKU per order
  // makes each order's stock visible on its own. The guarded run of the same
  // seed dead-letters too, but never releases what was not reserved.
  const storm: Partial<SimulationOptions> = {
    faults: { ...DEFAULT_FAULTS, transactionConflict: 0.45 },
    cancelChance: 0.8,
    skus: 1_000_000,
  };
  const releasedUnreserved = (r: SimulationResult) =>
    r.verification.violations.some((v) => v.invariant === 'reserved' && / reserved -\d+, expected 0$/.test(v.detail));
  let seed = 1;
  while (
    seed <= 5 &&
    !releasedUnreserved(await simulate(simulationOptions({ ...storm, orders: ORDERS, seed, guards: noVersionCheck })))
  )
    seed += 1;
  const guarded = await simulate(simulationOptions({ ...storm, orders: ORDERS, seed }));

  expect(seed).toBeLessThanOrEqual(5);
  expect(releasedUnreserved(guarded)).toBe(false);
});

test('a provider outage longer than the consumers retry budget dead-letters live messages: found within 2 seeds', async () => {
  const found = await firstViolatingSeed(
    { faults: { ...DEFAULT_FAULTS, providerOutages: 1, providerOutageSeconds: [600, 600] } },
    2,
  );

  expect(found?.invariants).toContain('dlq');
});

test('with keys scoped to the session, a retry from rotated credentials creates a second order: found within 2 seeds', async () => {
  const found = await firstViolatingSeed(
    {
      faults: { ...DEFAULT_FAULTS, credentialRotation: 0.5 },
      guards: { ...ALL_GUARDS, callerScope: 'session' },
    },
    2,
  );

  expect(found?.invariants).toContain('orders');
});

test('an operator redrive after that outage brings every dead-lettered message back, and the run ends with every invariant held', async () => {
  const outage = { ...DEFAULT_FAULTS, providerOutages: 1, providerOutageSeconds: [600, 600] as [number, number] };

  const result = await simulate(
    simulationOptions({ orders: ORDERS, seed: 1, faults: outage, redriveDlqsAfterSeconds: 900 }),
  );

  expect(result.faults['dlq-redrive']).toBe(1);
  expect(result.verification.violations).toEqual([]);
});
