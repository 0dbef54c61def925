import { formatFailure, runCampaign } from '@exactly-once/tools/simulation/campaign';
import { SHOP_SIMULATION, simulate, simulationOptions } from '../../tooling/shop/simulation/world';

/**
 * The shop's plug-in on the simulation engine (tooling/shop/simulation/world.ts): customers placing,
 * replaying and cancelling orders through the deployed create-order handler, judged by the shop's own
 * invariants (stock reserved and released per SKU, points per customer, no PICK after CANCEL_PICK)
 * beside the mechanism's. The mechanism's campaign runs on the neutral probe domain (campaign.test.ts).
 */
test("5 schedules of the shop's orders, replays and cancels under the default faults keep every invariant, the shop's own included", async () => {
  const report = await runCampaign({ intents: 500, intentsPerSchedule: 100, firstSeed: 1, world: SHOP_SIMULATION });

  if (report.failure !== undefined) throw new Error(formatFailure(report.failure));
  expect(report.schedules).toBe(5);
  expect(report.faults).toMatchObject({ 'dlq-redrive': 5, 'client-key-reuse': expect.any(Number) });
});

test("the shop's invariants judge its runs: orders, their stock and their customers' points", async () => {
  const result = await simulate(simulationOptions({ seed: 1, intents: 60 }));

  expect(result.verification.entityNoun).toBe('orders');
  expect(result.verification.effectsChecked).toMatch(/SKUs/);
  expect(result.verification.effectsChecked).toMatch(/customers/);
  expect(result.verification.violations).toEqual([]);
});
