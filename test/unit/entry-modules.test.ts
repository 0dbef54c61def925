import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { factoryModuleOf } from '@exactly-once/tools/simulation/world/consumers';
import { exampleName } from '../support/example-reach';

/**
 * The entry modules of the example (`lambdas/<example>/entry-points/`) and of the mechanism's own
 * functions, the relay and the sweeper (`packages/runtime/src/wiring/entry-points/`), each folder listed,
 * so a new one is held too, are factories: `makeHandler(parts)` beside `partsFromEnv()`, and loading one
 * reads no environment. The simulation imports them with no variable set; only the one-line bindings in
 * `handlers/` (`makeHandler(partsFromEnv())`) read the environment, at cold start. Loading is tried in a process of its own, under
 * an empty environment that records every variable looked up: a factory that builds a repository or
 * reads a caller rule as it loads is caught even when the variable has a default.
 */

const ROOT = resolve(__dirname, '../..');
/** Where functions are written as a factory (`entry-points/`) and its binding (`handlers/`): the example's and the mechanism's. */
const FOLDERS = [`lambdas/${exampleName(ROOT)}`, 'packages/runtime/src/wiring'];
const modulesOf = (folder: string): string[] =>
  readdirSync(join(ROOT, folder))
    .filter((file) => file.endsWith('.ts'))
    .map((file) => `${folder}/${file}`);
const FACTORIES = FOLDERS.flatMap((folder) => modulesOf(`${folder}/entry-points`));
const BINDINGS = FOLDERS.flatMap((folder) => modulesOf(`${folder}/handlers`));
/** The mechanism's surfaces an entry module builds on: what loading them reads is Powertools' and the SDK's settings. */
const MECHANISM = ['runtime', 'runtime/api', 'runtime/aws', 'runtime/runtime'].map((m) =>
  require.resolve(`@exactly-once/${m}`),
);

type Loaded = Record<string, { reads: string[]; error?: string }>;

function loadWithNoEnvironment(modules: readonly string[]): Loaded {
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'test/support/env-reads-at-load.ts', ...modules], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`the loading process failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as Loaded;
}

test("every entry module, the example's and the mechanism's, loads with no environment and reads no variable the mechanism does not", () => {
  // Arrange
  for (const folder of FOLDERS) expect(FACTORIES.filter((m) => m.startsWith(`${folder}/`)).length).toBeGreaterThan(0);

  // Act
  const loaded = loadWithNoEnvironment([...MECHANISM, ...FACTORIES]);

  // Assert
  const platform = new Set(MECHANISM.flatMap((m) => loaded[m].reads));
  const readAtLoad = FACTORIES.map((m) => ({
    module: m,
    error: loaded[m].error,
    reads: loaded[m].reads.filter((name) => !platform.has(name)),
  })).filter((m) => m.error !== undefined || m.reads.length > 0);
  expect(readAtLoad).toEqual([]);
});

test('every entry module exports makeHandler and partsFromEnv, and every deployed binding is the one line around them', () => {
  const bindingOf = (factory: string) => factory.replace('/entry-points/', '/handlers/');
  const exportsFunction = (module: string, name: string) =>
    new RegExp(`^export function ${name}\\(`, 'm').test(readSource(module));

  const withoutFactory = FACTORIES.filter(
    (m) => !exportsFunction(m, 'makeHandler') || !exportsFunction(m, 'partsFromEnv'),
  );
  const withoutBinding = FACTORIES.filter((m) => !BINDINGS.includes(bindingOf(m)));
  const notTheLine = BINDINGS.filter((m) => !isTheBinding(m));

  expect(withoutFactory).toEqual([]);
  expect(withoutBinding).toEqual([]);
  expect(notTheLine).toEqual([]);
});

const readSource = (module: string) => readFileSync(join(ROOT, module), 'utf8');

/** Its factory's import and `export const handler = makeHandler(partsFromEnv());`, and no other statement. */
function isTheBinding(binding: string): boolean {
  const folder = binding.slice(0, binding.lastIndexOf('/handlers/'));
  const name = binding.slice(binding.lastIndexOf('/') + 1, -'.ts'.length);
  const statements = readSource(binding)
    .replace(/\/\*\*[\s\S]*?\*\//g, '')
    .split(';')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  return (
    factoryModuleOf(binding) === `${folder}/entry-points/${name}.ts` &&
    statements.length === 2 &&
    statements[0] === `import { makeHandler, partsFromEnv } from '../entry-points/${name}'` &&
    statements[1] === 'export const handler = makeHandler(partsFromEnv())'
  );
}
