import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { exampleFolderName } from '@exactly-once/tools/load-domain';
import { synthesize } from '@exactly-once/tools/local-runtime/template/cloud-assembly';

/** Where the runtime project's one synthesized cloud assembly of the example is, for every test file to copy. */
export const SHARED_CDK_OUT_ENV = 'RUNTIME_TEST_CDK_OUT';
/** Where the runtime project's one synthesized cloud assembly of the probe app is (probe-app.ts). */
export const SHARED_PROBE_CDK_OUT_ENV = 'RUNTIME_TEST_PROBE_CDK_OUT';
/** The probe app (the neutral fixture's stack, built for the local runtime), as `cdk synth --app` takes it. */
export const PROBE_APP = 'npx tsx test/support/probe-app.ts';

const ROOT = path.resolve(__dirname, '..', '..');

/**
 * Synthesizes the stacks (bundling included, as `npm start` does) once for the whole runtime
 * project, side by side: the example's (about 35 CPU-seconds) and the probe app's (about 20); each
 * test file copies one instead of running `cdk synth` again. Without the example (its lib/ folder
 * deleted) only the probe app is synthesized: the mechanism's runtime tests run on it. The teardown
 * deletes them.
 */
export default async function setup(): Promise<void> {
  const probeOut = fs.mkdtempSync(path.join(os.tmpdir(), 'runtime-probe-cdk-out-'));
  const synths = [synthesize(ROOT, probeOut, undefined, { app: PROBE_APP })];
  process.env[SHARED_PROBE_CDK_OUT_ENV] = probeOut;
  if (fs.existsSync(path.join(ROOT, 'lib', exampleFolderName(ROOT)))) {
    const cdkOut = fs.mkdtempSync(path.join(os.tmpdir(), 'runtime-cdk-out-'));
    synths.push(synthesize(ROOT, cdkOut));
    process.env[SHARED_CDK_OUT_ENV] = cdkOut;
  }
  await Promise.all(synths);
}
