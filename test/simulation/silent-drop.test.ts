import { failed } from '@exactly-once/tools/simulation/campaign';
import { APPLIED_FEWER, SUPERSEDED_WITHOUT_NEWER } from '@exactly-once/tools/proof-kit/verify';
import type { SimulationResult } from '@exactly-once/tools/simulation/contract';
import { probeSimulationOptions, simulateProbe } from './probe-world';

/**
 * A fork whose FIFO consumer must see all payments of an account in one order made the account the
 * envelope's entityId (the FIFO group), while the versions stayed the payment's. The generic effect's
 * version guard (`lastVersion < :version` on the entity) then judges one payment's version 1 against
 * another's and drops it as stale: a 200-payment run applied a fraction of its events. The proof must
 * fail on that, not call it "superseded". Reproduced on the neutral fixture: 200 things of 10 accounts,
 * a fifth of them undone (version 2), as the simulation's defaults run them, with every fault.
 */

const ACCOUNTS = 10;
const SEED = 1;

const invariantsOf = (result: SimulationResult) => [...new Set(result.verification.violations.map((v) => v.invariant))];

test('things of one account named by the account as their entityId: the events the version guard drops fail the proof, as superseded by no newer event and as fewer applied than owed', async () => {
  const options = probeSimulationOptions({ seed: SEED, accounts: { count: ACCOUNTS, as: 'entity' } });

  const result = await simulateProbe(options);

  const fewer = result.verification.violations.filter((v) => v.invariant === APPLIED_FEWER);
  expect(invariantsOf(result)).toEqual(expect.arrayContaining([SUPERSEDED_WITHOUT_NEWER, APPLIED_FEWER]));
  expect(fewer.map((v) => v.detail)).toEqual([
    expect.stringMatching(/^probe: applied \d+ of the \d+ events it owes, .* \d+ marked superseded were dropped/),
    expect.stringMatching(/^probe-fifo: applied \d+ of the \d+ events it owes, .* \d+ marked superseded were dropped/),
  ]);
  expect(failed(result)).toBe(true);
});

test('the same things with the account as their orderingKey (each keeping its entity and versions): every event applied, every invariant holds', async () => {
  const options = probeSimulationOptions({ seed: SEED, accounts: { count: ACCOUNTS, as: 'ordering-key' } });

  const result = await simulateProbe(options);

  expect(result.verification.violations).toEqual([]);
  expect(failed(result)).toBe(false);
  expect(result.verification.appliedEffects).toEqual({
    probe: expect.any(Number),
    'probe-fifo': expect.any(Number),
  });
});
