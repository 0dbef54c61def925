import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { domainTemplate } from '@exactly-once/tools/scaffolder/domain-template';
import { exampleName } from '../support/example-reach';

/**
 * A fork takes the mechanism as versions: the three workspace packages packed with `npm pack`, an
 * application made outside the repository from the skeleton domain the packed tools ship (the bookings
 * of packages/tools/templates/domain, with the root's bin/app.ts, lib/config.ts, lib/app-stack.ts,
 * cdk.json and tsconfig.json) that installs the tarballs like any
 * dependency, and nothing else of the repository. It type-checks, synthesizes both stages and runs the
 * simulation; and a change inside a package reaches it by installing the next tarball, with none of
 * the application's own files edited.
 */
const REPO = resolve(__dirname, '../..');
const PACKAGES = ['runtime', 'cdk', 'tools'] as const;
const SLOW = 600_000;

let work: string;
let app: string;

function run(command: string, args: string[], cwd: string): { status: number | null; output: string } {
  const result = spawnSync(command, args, {
    cwd,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    env: {
      ...process.env,
      CDK_DISABLE_CLI_TELEMETRY: 'true',
      FORCE_COLOR: '0',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
    },
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

function mustRun(command: string, args: string[], cwd: string): string {
  const { status, output } = run(command, args, cwd);
  if (status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${status}):\n${output}`);
  return output;
}

/** `npm pack` of a package folder into `into`: the tarball's path. */
function pack(folder: string, into: string): string {
  const name = mustRun('npm', ['pack', '--silent', '--pack-destination', into], folder).trim().split('\n').pop()!;
  return join(into, name);
}

/** The application's own files (not node_modules, not the manifests an install rewrites), each with its hash. */
function ownFiles(dir: string, root = dir): Record<string, string> {
  return Object.fromEntries(
    readdirSync(dir).flatMap((name): [string, string][] => {
      const path = join(dir, name);
      const rel = relative(root, path);
      if (['node_modules', 'cdk.out', '.local', 'package.json', 'package-lock.json'].includes(rel)) return [];
      if (statSync(path).isDirectory()) return Object.entries(ownFiles(path, root));
      return [[rel, createHash('sha256').update(readFileSync(path)).digest('hex')]];
    }),
  );
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'packed-fork-'));
  const tarballs = join(work, 'tarballs');
  mkdirSync(tarballs);
  const packed = Object.fromEntries(PACKAGES.map((p) => [p, pack(join(REPO, 'packages', p), tarballs)]));

  app = join(work, 'app');
  mkdirSync(join(app, 'lib'), { recursive: true });
  for (const file of ['bin', 'cdk.json', '.nvmrc']) cpSync(join(REPO, file), join(app, file), { recursive: true });
  for (const file of ['lib/config.ts', 'lib/app-stack.ts']) cpSync(join(REPO, file), join(app, file));

  // The repository's manifest, as a fork keeps it: the packages from their tarballs instead of the
  // workspace, the scripts running the tools from where npm installed them.
  const manifest = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8'));
  delete manifest.workspaces;
  manifest.name = 'bookings';
  manifest.dependencies['@exactly-once/runtime'] = `file:${packed.runtime}`;
  manifest.devDependencies['@exactly-once/cdk'] = `file:${packed.cdk}`;
  manifest.devDependencies['@exactly-once/tools'] = `file:${packed.tools}`;
  for (const [name, script] of Object.entries(manifest.scripts as Record<string, string>))
    manifest.scripts[name] = script.replaceAll('packages/tools/src/', 'node_modules/@exactly-once/tools/src/');
  writeFileSync(join(app, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  const tsconfig = JSON.parse(readFileSync(join(REPO, 'tsconfig.json'), 'utf8'));
  tsconfig.include = ['bin', 'lib', 'lambdas', 'tooling'];
  tsconfig.exclude = ['node_modules', 'cdk.out'];
  tsconfig.compilerOptions.types = ['node'];
  writeFileSync(join(app, 'tsconfig.json'), `${JSON.stringify(tsconfig, null, 2)}\n`);

  // Everything else comes from npm's cache, filled by this repository's own `npm ci`.
  mustRun('npm', ['install', '--prefer-offline', '--ignore-scripts', '--loglevel=error'], app);
  // The domain: the skeleton the packed tools ship (what `npm run new:domain` writes), under the name
  // lib/app-stack.ts and package.json give.
  const shipped = join(app, 'node_modules/@exactly-once/tools/templates/domain');
  for (const { path, text } of domainTemplate(exampleName(REPO), shipped)) {
    mkdirSync(dirname(join(app, path)), { recursive: true });
    writeFileSync(join(app, path), text);
  }
}, SLOW);

afterAll(() => rmSync(work, { recursive: true, force: true }));

test(
  'the application built on the tarballs type-checks, and reads the packages from its node_modules',
  () => {
    const { status, output } = run('npx', ['tsc', '--noEmit', '-p', '.'], app);

    expect(output).toBe('');
    expect(status).toBe(0);
    expect(readdirSync(join(app, 'node_modules/@exactly-once')).sort()).toEqual(['cdk', 'runtime', 'tools']);
  },
  SLOW,
);

// One stage: what a tarball could lack shows in either (the functions bundled from node_modules, the
// constructs loaded from it); both stages of the same skeleton synthesize in another-domain.test.ts. Prod
// uses more of the constructs' options (retained DLQs, termination protection).
test(
  'it synthesizes the prod stage from the installed packages, with cdk-nag and the correctness aspects',
  () => {
    const { status, output } = run('npx', ['cdk', 'synth', '--quiet', '-c', 'stage=prod'], app);

    expect({ status, output: status === 0 ? '' : output }).toEqual({ status: 0, output: '' });
  },
  SLOW,
);

test(
  'the simulation runs the bookings from the installed tools, every invariant held',
  () => {
    const { status, output } = run('npm', ['run', 'sim', '--', '--intents', '100'], app);

    expect(output).toContain('every invariant held');
    expect(status).toBe(0);
  },
  SLOW,
);

test(
  "a change inside a package reaches the application by installing its next tarball, with none of the application's own files edited",
  () => {
    const next = join(work, 'runtime-next');
    cpSync(join(REPO, 'packages/runtime'), next, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(next, 'package.json'), 'utf8'));
    writeFileSync(join(next, 'package.json'), JSON.stringify({ ...manifest, version: '0.1.1' }, null, 2));
    writeFileSync(
      join(next, 'src/index.ts'),
      `${readFileSync(join(next, 'src/index.ts'), 'utf8')}\nexport const NEXT_RELEASE = 'a fix from upstream';\n`,
    );
    const before = ownFiles(app);

    mustRun('npm', ['install', '--prefer-offline', '--ignore-scripts', '--loglevel=error', pack(next, work)], app);

    const seen = mustRun(
      'npx',
      [
        'tsx',
        '-e',
        "const r = require('@exactly-once/runtime'); console.log(require('@exactly-once/runtime/package.json').version, r.NEXT_RELEASE)",
      ],
      app,
    );
    expect(seen.trim()).toBe('0.1.1 a fix from upstream');
    expect(ownFiles(app)).toEqual(before);
  },
  SLOW,
);
