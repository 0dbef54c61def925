import type { Template } from 'aws-cdk-lib/assertions';
import { PROBE_SIMULATED_CONSUMERS } from '../exactly-once/fixtures/probe-simulation';
import { probeSimulationOptions, ProbeWorld } from './probe-world';
import { synthProbeStack } from '../exactly-once/fixtures/probe-stack';
import {
  expectConsumersSimulated,
  expectRelayMappingSimulated,
  expectTimeoutsSimulated,
} from './stack-settings-checks';

/**
 * The simulation runs the settings the mechanism's construct deploys (packages/cdk/src), read here from
 * the probe domain's synthesized stack: a change to lib/ that the simulation does not follow fails this
 * test instead of drifting silently. The example's stack: shop-stack-settings.test.ts.
 */
let template: Template;

beforeAll(() => {
  template = synthProbeStack({ consumers: PROBE_SIMULATED_CONSUMERS }).template;
});

test("the relay's stream mapping settings are the simulated mapping's", () => {
  expectRelayMappingSimulated(template);
});

test("the relay's, the sweeper's and every consumer's timeouts are the simulated ones", () => {
  expectTimeoutsSimulated(template, PROBE_SIMULATED_CONSUMERS);
});

test("each consumer's simulated queue, DLQ, pollers and environment are the stack's for that consumer", () => {
  const world = new ProbeWorld(probeSimulationOptions({ seed: 1 }));

  expectConsumersSimulated(template, world, PROBE_SIMULATED_CONSUMERS);
});
