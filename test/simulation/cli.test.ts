import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { exampleDomain } from '../support/example-domain';

const SIM_CLI = join(__dirname, '../../packages/tools/src/simulation/cli.ts');
const tsxCli = join(__dirname, '../../node_modules/tsx/dist/cli.mjs');
/** What the help and the summary call the domain's intents: its proof domain's noun (the example's). */
const NOUN = exampleDomain().proof?.entityNoun ?? 'intents';

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
  const { code, stdout } = await runSimIntoSlowPipe(['--intents', '200', '--seed', '7', '--trace']);

  const lines = stdout.trimEnd().split('\n');
  expect(code).toBe(0);
  expect(lines.length).toBeGreaterThan(1000);
  expect(lines[lines.length - 1]).toMatch(/^trace hash [0-9a-f]{8}; violations: 0$/);
}, 60_000);

/** Runs `npm run sim -- ...args` and returns what it printed (stdout, stderr). */
function runSim(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [tsxCli, SIM_CLI, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

test('--orders N is --intents N: the same schedule, the same trace', async () => {
  const [intents, orders] = await Promise.all([
    runSim(['--intents', '20', '--seed', '3', '--trace']),
    runSim(['--orders', '20', '--seed', '3', '--trace']),
  ]);

  expect([intents.code, orders.code]).toEqual([0, 0]);
  expect(orders.stdout).toBe(intents.stdout);
}, 60_000);

test('--intents and --orders together are refused as one setting given twice: usage error, nothing simulated', async () => {
  const { code, stdout, stderr } = await runSim(['--intents', '20', '--orders', '30', '--seed', '3', '--trace']);

  expect(code).toBe(2);
  expect(stderr).toContain('Give --intents or --orders, not both: they are one setting');
  expect(stdout).toBe('');
}, 60_000);

test("the help names the domain's noun for what an intent asks for", async () => {
  const { code, stdout } = await runSim(['--help']);

  expect(code).toBe(0);
  expect(stdout).toContain(`--intents N              intents to simulate: new ${NOUN} (default 10000)`);
}, 60_000);

test('schedules shared out over two processes (--jobs 2) report what one process running them all reports, the failure included', async () => {
  const withoutSpeed = (stdout: string) =>
    stdout
      .split('\n')
      .filter((line) => !line.includes(`${NOUN}/s wall clock`))
      .join('\n');
  const clean = ['--intents', '400', '--per-schedule', '100', '--seed', '5'];
  const broken = ['--intents', '400', '--per-schedule', '100', '--seed', '1', '--guard', 'dedupeOn=messageId'];

  const [one, two, brokenOne, brokenTwo] = await Promise.all([
    runSim([...clean, '--jobs', '1']),
    runSim([...clean, '--jobs', '2']),
    runSim([...broken, '--jobs', '1']),
    runSim([...broken, '--jobs', '2']),
  ]);

  expect([one.code, two.code]).toEqual([0, 0]);
  expect(two.stdout).toContain(`simulated 400 ${NOUN} (`);
  expect(withoutSpeed(two.stdout)).toBe(withoutSpeed(one.stdout));
  expect([brokenOne.code, brokenTwo.code]).toEqual([1, 1]);
  const failureOf = (stdout: string) => stdout.slice(stdout.indexOf('VIOLATION'));
  expect(failureOf(brokenTwo.stdout)).toContain('VIOLATION in schedule seed');
  expect(failureOf(brokenTwo.stdout)).toBe(failureOf(brokenOne.stdout));
}, 240_000);
