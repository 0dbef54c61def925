import { spawn } from 'node:child_process';
import { join } from 'node:path';

const SIM_CLI = join(__dirname, '../../packages/tools/src/simulation/cli.ts');
const tsxCli = join(__dirname, '../../node_modules/tsx/dist/cli.mjs');

/** Runs `npm run sim -- ...args` with stdout into a pipe that is read slowly, as `| less` reads it. */
function runSimIntoSlowPipe(args: string[]): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [tsxCli, SIM_CLI, ...args], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      // A slow reader: the pipe fills and the CLI's writes queue up behind it.
      child.stdout.pause();
      setTimeout(() => child.stdout.resume(), 5);
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout: Buffer.concat(chunks).toString('utf8') }));
  });
}

test('a replayed trace reaches a slow pipe whole: the CLI exits only after stdout took every line', async () => {
  const { code, stdout } = await runSimIntoSlowPipe(['--orders', '200', '--seed', '7', '--trace']);

  const lines = stdout.trimEnd().split('\n');
  expect(code).toBe(0);
  expect(lines.length).toBeGreaterThan(1000);
  expect(lines[lines.length - 1]).toMatch(/^trace hash [0-9a-f]{8}; violations: 0$/);
}, 60_000);

/** Runs `npm run sim -- ...args` and returns what it printed (stdout). */
function runSim(args: string[]): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [tsxCli, SIM_CLI, ...args], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout }));
  });
}

test('schedules shared out over two processes (--jobs 2) report what one process running them all reports, the failure included', async () => {
  const withoutSpeed = (stdout: string) =>
    stdout
      .split('\n')
      .filter((line) => !line.includes('orders/s wall clock'))
      .join('\n');
  const clean = ['--orders', '400', '--per-schedule', '100', '--seed', '5'];
  const broken = ['--orders', '400', '--per-schedule', '100', '--seed', '1', '--guard', 'dedupeOn=messageId'];

  const [one, two, brokenOne, brokenTwo] = await Promise.all([
    runSim([...clean, '--jobs', '1']),
    runSim([...clean, '--jobs', '2']),
    runSim([...broken, '--jobs', '1']),
    runSim([...broken, '--jobs', '2']),
  ]);

  expect([one.code, two.code]).toEqual([0, 0]);
  expect(two.stdout).toContain('400 orders');
  expect(withoutSpeed(two.stdout)).toBe(withoutSpeed(one.stdout));
  expect([brokenOne.code, brokenTwo.code]).toEqual([1, 1]);
  const failureOf = (stdout: string) => stdout.slice(stdout.indexOf('VIOLATION'));
  expect(failureOf(brokenTwo.stdout)).toContain('VIOLATION in schedule seed');
  expect(failureOf(brokenTwo.stdout)).toBe(failureOf(brokenOne.stdout));
}, 240_000);
