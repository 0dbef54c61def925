import * as fs from 'node:fs';
import { SHARED_CDK_OUT_ENV, SHARED_PROBE_CDK_OUT_ENV } from './runtime-setup';

export default async function teardown(): Promise<void> {
  for (const name of [SHARED_CDK_OUT_ENV, SHARED_PROBE_CDK_OUT_ENV]) {
    const cdkOut = process.env[name];
    if (cdkOut !== undefined) fs.rmSync(cdkOut, { recursive: true, force: true });
  }
}
