import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { synthesize } from '../../tools/local-runtime/template/cloud-assembly';

/** Where the runtime project's one synthesized cloud assembly is, for every test file to copy. */
export const SHARED_CDK_OUT_ENV = 'RUNTIME_TEST_CDK_OUT';

/**
 * Synthesizes the stack (bundling included, as `npm start` does) once for the whole runtime
 * project: each test file copies it instead of running `cdk synth` again (about 35 CPU-seconds a
 * time). The teardown deletes it.
 */
export default async function setup(): Promise<void> {
  const cdkOut = fs.mkdtempSync(path.join(os.tmpdir(), 'runtime-cdk-out-'));
  await synthesize(path.resolve(__dirname, '..', '..'), cdkOut);
  process.env[SHARED_CDK_OUT_ENV] = cdkOut;
}
