import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EXIT } from '@exactly-once/tools/cli/exit';

/**
 * The tools' one command (`exactly-once`, the `bin` of @exactly-once/tools, what a fork runs as
 * `npx exactly-once sim --help`): `--help` lists every tool, an unknown command is a usage error (exit 2),
 * a command's own flags reach its tool, and the Node check runs before anything else.
 */
const ROOT = join(__dirname, '..', '..');
const BIN = join(ROOT, 'packages', 'tools', 'src', 'cli', 'bin.cjs');
const TOOLS = ['start', 'loadtest', 'dlq', 'bench', 'sim', 'new:consumer', 'new:domain', 'call'];

function exactlyOnce(args: string[], cwd = ROOT): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [BIN, ...args], { cwd, encoding: 'utf8' });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

test('--help lists every tool and exits 0', () => {
  // Act
  const { code, stdout, stderr } = exactlyOnce(['--help']);

  // Assert
  expect({ code, stderr }).toEqual({ code: EXIT.ok, stderr: '' });
  expect(stdout).toMatch(/^Usage: exactly-once <command>/);
  for (const tool of TOOLS) expect(stdout).toMatch(new RegExp(`^  ${tool} `, 'm'));
});

test.each([
  ['an unknown command', ['simulate'], 'Unknown command "simulate"'],
  ['no command', [], 'No command given'],
])('%s is a usage error: it says so, prints the usage and exits 2', (_what, args, message) => {
  // Act
  const { code, stdout, stderr } = exactlyOnce(args);

  // Assert
  expect(code).toBe(EXIT.usage);
  expect(stdout).toBe('');
  expect(stderr).toContain(message);
  expect(stderr).toMatch(/Usage: exactly-once <command>/);
});

test("a command's --help reaches its tool, which prints its own usage", () => {
  // Act
  const { code, stdout, stderr } = exactlyOnce(['sim', '--help']);

  // Assert
  expect({ code, stderr }).toEqual({ code: EXIT.ok, stderr: '' });
  expect(stdout).toMatch(/^Usage: npm run sim/);
});

test('the Node check comes first: under an application that needs a newer Node, not even --help answers', () => {
  // Arrange: an application root (cdk.json) whose package.json asks for a Node that does not exist yet.
  const app = mkdtempSync(join(tmpdir(), 'tools-bin-'));
  writeFileSync(join(app, 'cdk.json'), '{}');
  writeFileSync(join(app, 'package.json'), JSON.stringify({ engines: { node: '>=999.0.0' } }));
  writeFileSync(join(app, '.nvmrc'), '999.0.0\n');

  try {
    // Act
    const { code, stdout, stderr } = exactlyOnce(['--help'], app);

    // Assert
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/^Node v\S+ is not supported: this project needs Node >=999\.0\.0/);
  } finally {
    rmSync(app, { recursive: true, force: true });
  }
});
