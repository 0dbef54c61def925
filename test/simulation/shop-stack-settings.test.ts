import { CONSUMERS } from '../../lambdas/shop/consumers';
import { simulationOptions, World } from '../../tooling/shop/simulation/world';
import { synthStack } from '../support/synth';
import { expectConsumersSimulated, expectTimeoutsSimulated } from './stack-settings-checks';

/**
 * The shop's simulated world runs what the shop's stack deploys: its consumers' queues, DLQs, mappings,
 * environments and timeouts, read from the shop's synthesized template. (The mechanism's construct
 * against the engine: stack-settings.test.ts.)
 */
test("the shop's stack deploys each of its consumers and functions as its simulated world runs them", () => {
  const { template } = synthStack();
  const world = new World(simulationOptions({ seed: 1 }));

  expectTimeoutsSimulated(template, CONSUMERS);
  expectConsumersSimulated(template, world, CONSUMERS);
});
