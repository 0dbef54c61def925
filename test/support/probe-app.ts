import { App } from 'aws-cdk-lib';
import { ProbeStack, probeStage } from '../exactly-once/fixtures/probe-stack';
import { PROBE_APP_CONSUMERS } from '../exactly-once/fixtures/probe-stack-consumers';

/**
 * The probe stack as a CDK app of its own, built as the local runtime runs it: what `-c localRuntime=true`
 * gives the example's app (fault injection on, the proof kit's test-only inbox-bypass build, never
 * deployable), on the neutral fixture, with a third consumer beside the probe consumers (PROBE_APP_CONSUMERS:
 * a stateful one whose undo supersedes). `cdk synth --app` runs it (PROBE_APP in runtime-setup.ts, with real bundling), so the
 * runtime tests run the mechanism's proofs with the example deleted: startProbeStack
 * (test/runtime/fixtures.ts), with the tools pointed at probe-tooling.ts.
 */
const app = new App();
new ProbeStack(app, 'ProbeStack', {
  settings: probeStage('dev', { localRuntime: true }),
  consumers: PROBE_APP_CONSUMERS,
});
