import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadDomain, toolingModulePath } from '@exactly-once/tools/load-domain';
import { takeToolingFlag } from '@exactly-once/tools/cli/tooling-flag';
import { thingHappened } from '../exactly-once/fixtures/probe-events';
import { PROBE_TOOLING_MODULE } from '../support/probe-tooling';

/**
 * The tools' seam for their domain (packages/tools/src/load-domain.ts, called by each command's entry point):
 * `--tooling` names the tooling module instead of the example's (the runtime tests name the probe tooling),
 * with a clear error when the module is missing or exports no `tooling`; the scaffolder refuses a tooling
 * module without `scaffold`, writing nothing.
 */
const ROOT = resolve(__dirname, '..', '..');

test('--tooling names the module the tools take their domain from, relative to the repository root', () => {
  // Arrange
  const { toolingModule, args } = takeToolingFlag(['list', '--tooling', PROBE_TOOLING_MODULE, '--json']);

  // Act
  const tooling = loadDomain(ROOT, { toolingModule });

  // Assert
  expect(args).toEqual(['list', '--json']);
  expect(tooling.consumers.map((c) => [c.name, c.providers])).toEqual([
    ['probe', ['probe']],
    ['probe-fifo', ['probe-fifo']],
    ['probe-state', ['probe-state']],
  ]);
  expect(tooling.outboxTableOutput).toBe('ThingsTableName');
  expect(tooling.proof?.entityTableOutput).toBe('ThingsTableName');
  expect(tooling.isEvent(JSON.stringify(thingHappened('t-1')))).toBe(true);
  expect(tooling.isEvent(JSON.stringify({ ...thingHappened('t-1'), type: 'OtherThing' }))).toBe(false);
  expect(tooling.isEvent('not json')).toBe(false);
});

test('--tooling=MODULE is the same flag; --tooling without a module is a usage error', () => {
  expect(takeToolingFlag([`--tooling=${PROBE_TOOLING_MODULE}`, '--seed', '3'])).toEqual({
    toolingModule: PROBE_TOOLING_MODULE,
    args: ['--seed', '3'],
  });
  expect(takeToolingFlag(['--seed', '3'])).toEqual({ args: ['--seed', '3'] });
  expect(() => takeToolingFlag(['--tooling'])).toThrow(
    expect.objectContaining({ name: 'UsageError', message: '--tooling needs the path of a tooling module' }),
  );
  expect(() => takeToolingFlag(['--tooling', '--json'])).toThrow('--tooling needs the path of a tooling module');
});

test('without it, the module is tooling/<exactlyOnce.example> of package.json', () => {
  const root = mkdtempSync(join(tmpdir(), 'tooling-root-'));
  writeFileSync(join(root, 'package.json'), JSON.stringify({ exactlyOnce: { example: 'bookings' } }));

  expect(toolingModulePath(root)).toBe(join(root, 'tooling', 'bookings'));
  expect(toolingModulePath(root, { toolingModule: '' })).toBe(join(root, 'tooling', 'bookings'));
  expect(toolingModulePath(root, { toolingModule: '/abs/tooling.ts' })).toBe('/abs/tooling.ts');
});

test('a module that does not exist is refused, naming the path and the flag', () => {
  const missing = join(mkdtempSync(join(tmpdir(), 'tooling-')), 'nowhere.ts');

  expect(() => loadDomain(ROOT, { toolingModule: missing })).toThrow(
    `No tooling module at ${missing} (from --tooling): the tools cannot find the domain.`,
  );
});

test('a module that exports no tooling is refused, naming it', () => {
  const module = join(mkdtempSync(join(tmpdir(), 'tooling-')), 'empty.js');
  writeFileSync(module, 'exports.somethingElse = 1;\n');

  expect(() => loadDomain(ROOT, { toolingModule: module })).toThrow(
    `${module} exports no \`tooling\` (packages/tools/src/domain.ts says what it must hold).`,
  );
});

test('a module that fails while loading is not reported missing: its own error comes through', () => {
  const module = join(mkdtempSync(join(tmpdir(), 'tooling-')), 'broken.js');
  writeFileSync(module, "require('./no-such-dependency');\n");

  expect(() => loadDomain(ROOT, { toolingModule: module })).toThrow(/no-such-dependency/);
});

/** Every file under `dir`: what a refusal must leave as it was. */
const filesUnder = (dir: string) => readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();

test('the scaffolder refuses a tooling module without scaffold, saying so, and writes nothing', () => {
  // Its root is a folder of its own: were the refusal gone, nothing could be written into this repository.
  const root = mkdtempSync(join(tmpdir(), 'scaffold-root-'));
  writeFileSync(join(root, 'package.json'), readFileSync(join(ROOT, 'package.json')));
  const before = filesUnder(root);

  // In a process of its own, as `npm run new:consumer` runs (it loads prettier, which jest's VM cannot).
  const result = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      '-e',
      "require('./packages/tools/src/scaffolder/new-consumer.ts').main(['audit', '--tooling', process.argv[2]], process.argv[1]).then((code) => (process.exitCode = code))",
      root,
      join(ROOT, PROBE_TOOLING_MODULE),
    ],
    { cwd: ROOT, encoding: 'utf8' },
  );

  expect({ status: result.status, stderr: result.stderr }).toEqual({
    status: 1,
    stderr:
      "new:consumer: the example's tooling module gives no `scaffold` (packages/tools/src/domain.ts): there is no consumer folder to write into\n",
  });
  expect(filesUnder(root)).toEqual(before);
}, 60_000);
