import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { usage } from '@exactly-once/tools/dlq/args';
import { exampleDomain } from '../support/example-domain';
import { PROBE_TOOLING_MODULE } from '../support/probe-tooling';
import { PAST_HORIZON_RUNBOOK } from '@exactly-once/tools/dlq/horizon';
import { EXIT } from '@exactly-once/tools/cli/exit';

/**
 * Every command a person runs answers `--help` with its usage (exit 0, nothing started), a mistyped flag
 * with the message and the usage (exit 2), and, when it needs the local runtime, a runtime that is not
 * running with one line and exit 3, the same for each.
 */
const root = join(__dirname, '..', '..');
const DLQ_USAGE = usage(exampleDomain().consumers);
const COMMANDS: [string, string, RegExp][] = [
  ['npm start', 'packages/tools/src/local-runtime/start.ts', /^Usage: npm start/],
  ['npm run call', 'packages/tools/src/local-runtime/call.ts', /^Usage: npm run call/],
  ['npm run loadtest', 'packages/tools/src/proof-kit/cli.ts', /^Usage: npm run loadtest/],
  ['npm run dlq', 'packages/tools/src/dlq/cli.ts', /^Usage: npm run dlq/],
  ['npm run bench', 'packages/tools/src/bench/cli.ts', /^Usage: npm run bench/],
  ['npm run sim', 'packages/tools/src/simulation/cli.ts', /^Usage: npm run sim/],
  ['npm run new:consumer', 'packages/tools/src/scaffolder/new-consumer.ts', /^Usage: npm run new:consumer/],
];
const NEED_THE_RUNTIME: [string, string, string[]][] = [
  ['npm run call', 'packages/tools/src/local-runtime/call.ts', ['GET', '/orders/x']],
  ['npm run loadtest', 'packages/tools/src/proof-kit/cli.ts', ['--profile', 'smoke']],
  ['npm run dlq', 'packages/tools/src/dlq/cli.ts', ['list']],
];

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(file: string, args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    // tsx as a loader in this Node: one process per command, not tsx's launcher and its child.
    const child = spawn(process.execPath, ['--import', 'tsx', file, ...args], {
      cwd: root,
      env: { ...process.env, OUTPUTS_FILE: join(root, '.local', 'no-runtime-here.json'), PORT: '0' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Runs every command line, four at a time (the machine has other work), keyed by command and case. */
const results = new Map<string, Run>();
beforeAll(async () => {
  const jobs: [string, string, string[]][] = [
    ...COMMANDS.flatMap(([name, file]): [string, string, string[]][] => [
      [`${name} help`, file, ['--help']],
      [`${name} bad flag`, file, ['--no-such-flag']],
    ]),
    ...NEED_THE_RUNTIME.map(([name, file, args]): [string, string, string[]] => [`${name} not running`, file, args]),
    // The probe tooling, named on the command line: it gives no simulated world, so sim refuses saying so.
    [
      'npm run sim --tooling',
      'packages/tools/src/simulation/cli.ts',
      ['--tooling', PROBE_TOOLING_MODULE, '--intents', '1'],
    ],
  ];
  const queue = [...jobs];
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let job = queue.shift(); job !== undefined; job = queue.shift())
        results.set(job[0], await run(job[1], job[2]));
    }),
  );
}, 120_000);

test.each(COMMANDS)('%s --help prints its usage and exits 0, starting nothing', (name, _file, usage) => {
  const { code, stdout, stderr } = results.get(`${name} help`)!;

  expect({ code, stderr }).toEqual({ code: EXIT.ok, stderr: '' });
  expect(stdout).toMatch(usage);
  expect(stdout).toMatch(/-h, --help/);
  expect(stdout).toMatch(/Exit codes: 0 .*2 usage error/);
});

test.each(COMMANDS)('%s with a mistyped flag names it, prints the usage and exits 2', (name) => {
  const { code, stdout, stderr } = results.get(`${name} bad flag`)!;

  expect(code).toBe(EXIT.usage);
  expect(stdout).toBe('');
  expect(stderr).toMatch(/Unknown option '--no-such-flag'/);
  expect(stderr).not.toMatch(/To specify a positional argument/);
  expect(stderr).toMatch(/usage: npm (start|run)/i);
});

/** The commands that read the domain: each takes its tooling module from `--tooling` when given. */
const READ_THE_DOMAIN = COMMANDS.filter(([name]) => name !== 'npm run call');

test.each(READ_THE_DOMAIN)('%s --help documents --tooling, the tooling module it takes the domain from', (name) => {
  const { stdout } = results.get(`${name} help`)!;

  expect(stdout).toMatch(
    /^ {2}--tooling MODULE +the domain's tooling module \(a path from the root, exporting `tooling`; default: tooling\/<exactlyOnce\.example>\)$/m,
  );
});

test('--tooling reaches the command: sim on the probe tooling, which gives no simulated world, refuses saying so', () => {
  const { code, stderr } = results.get('npm run sim --tooling')!;

  expect(code).toBe(EXIT.failed);
  expect(stderr).toMatch(/^sim: The example's tooling module gives no simulated world/);
});

test.each(NEED_THE_RUNTIME)(
  '%s without a running runtime says so in one line and exits 3, as every command does',
  (name) => {
    const { code, stderr } = results.get(`${name} not running`)!;

    expect(code).toBe(EXIT.notRunning);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(/npm start/);
  },
);

test("the DLQ tool's help gives each option its own text: the past-horizon procedure under --past-horizon only", () => {
  const section = (flag: string) => {
    const start = DLQ_USAGE.indexOf(`\n  ${flag}`);
    const next = DLQ_USAGE.slice(start + 1).search(/\n {2}-/);
    return DLQ_USAGE.slice(start, start + 1 + next);
  };

  expect(section('--past-horizon')).toContain(PAST_HORIZON_RUNBOOK);
  expect(section('--past-horizon')).toContain('INBOX#<consumer>#<eventId>');
  expect(section('--provider-performed')).toContain('ProviderKeyWindowPassed');
  expect(section('--provider-performed')).not.toContain(PAST_HORIZON_RUNBOOK);
  expect(section('--provider-performed')).not.toContain('INBOX#');
});
