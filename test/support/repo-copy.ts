import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

/**
 * Runs a tool of node_modules/.bin in a copy of the repository (whose node_modules links to this
 * one's): its exit status and output, never a throw, so a test asserts both.
 */
export function runInCopy(copy: string, tool: string, args: string[]): { status: number | null; output: string } {
  const result = spawnSync(join(copy, 'node_modules/.bin', tool), args, {
    cwd: copy,
    encoding: 'utf8',
    // A whole test tier's output can pass spawnSync's 1 MB default, which would kill the run.
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, CDK_DISABLE_CLI_TELEMETRY: 'true', FORCE_COLOR: '0' },
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}
