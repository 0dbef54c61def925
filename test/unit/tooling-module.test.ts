import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadDomain, toolingModulePath } from '@exactly-once/tools/load-domain';
import { takeToolingFlag } from '@exactly-once/tools/cli/tooling-flag';
import { proofDomainOf, simulationWorldOf } from '@exactly-once/tools/domain-parts';
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

test('an engine handed a domain without the part it needs refuses, saying which', async () => {
  const tooling = loadDomain(ROOT, { toolingModule: PROBE_TOOLING_MODULE });

  await expect(simulationWorldOf(tooling)).rejects.toThrow(
    "The example's tooling module gives no simulated world (`simulation`, packages/tools/src/simulation/contract.ts): there is nothing to simulate.",
  );
  expect(proofDomainOf(tooling)).toBe(tooling.proof);
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

/** The tools' modules that run their command as they load: loading one is running it. */
const RUN_AS_THEY_LOAD = [
  'local-runtime/start.ts',
  'local-runtime/call.ts',
  'proof-kit/cli.ts',
  'bench/cli.ts',
  'simulation/cli.ts',
];

test('no module of the tools reads the domain while it loads: every one loads beside a domain that refuses to be read', () => {
  // Arrange: an application root whose example's tooling module throws when it is loaded.
  const root = mkdtempSync(join(tmpdir(), 'no-domain-root-'));
  writeFileSync(join(root, 'cdk.json'), '{}');
  const application = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(join(root, 'package.json'), JSON.stringify({ ...application, exactlyOnce: { example: 'spy' } }));
  // The Node check every command starts with reads these two of the application's root.
  writeFileSync(join(root, '.nvmrc'), readFileSync(join(ROOT, '.nvmrc')));
  mkdirSync(join(root, 'tooling', 'spy'), { recursive: true });
  writeFileSync(
    join(root, 'tooling', 'spy', 'index.js'),
    "throw new Error('the domain was read while the tools loaded');\n",
  );
  const tools = join(ROOT, 'packages', 'tools', 'src');
  const modules = readdirSync(tools, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts') && !RUN_AS_THEY_LOAD.includes(file))
    .map((file) => join(tools, file));

  // Act: every module loaded in one process of its own (prettier, which some load, needs a real Node), from that root.
  const result = spawnSync(
    process.execPath,
    [
      '--import',
      pathToFileURL(require.resolve('tsx')).href,
      '-e',
      `const failures = [];
      for (const file of JSON.parse(process.argv[1]))
        try { require(file); } catch (error) { failures.push(file + ': ' + error.message); }
      process.stdout.write('\\n' + JSON.stringify(failures), () => process.exit(0));`,
      JSON.stringify(modules),
    ],
    { cwd: root, encoding: 'utf8', env: { ...process.env, AWS_REGION: 'us-east-1' } },
  );

  // Assert
  expect(modules.length).toBeGreaterThan(150);
  expect(result.status).toBe(0);
  expect(JSON.parse(result.stdout.trim().split('\n').at(-1)!)).toEqual([]);
}, 120_000);
