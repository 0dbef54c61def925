import * as fs from 'node:fs';
import { SHARED_CDK_OUT_ENV } from './runtime-setup';

export default async function teardown(): Promise<void> {
  const cdkOut = process.env[SHARED_CDK_OUT_ENV];
  if (cdkOut !== undefined) fs.rmSync(cdkOut, { recursive: true, force: true });
}
