import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { signedFetch } from '@exactly-once/tools/local-runtime/api/sign';
import { eventually, isAlive, writeAssembly } from './fixtures';

/**
 * `npm start` as a user runs it (tsx packages/tools/src/local-runtime/start.ts), on a hand-made cloud
 * assembly (--no-synth): clear one-line errors, and SIGTERM leaves nothing behind.
 */
const projectDir = path.resolve(__dirname, '..', '..');
const tsxCli = path.join(projectDir, 'node_modules', 'tsx', 'dist', 'cli.mjs');

function start(env: Record<string, string>): {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
} {
  let output = '';
  const child = spawn(process.execPath, [tsxCli, 'packages/tools/src/local-runtime/start.ts', '--no-synth'], {
    cwd: projectDir,
    env: { ...process.env, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** Every process below `pid`, from ps. */
function descendants(pid: number): number[] {
  const rows = execFileSync('ps', ['-e', '-o', 'pid=,ppid='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s+/).map(Number));
  const found: number[] = [];
  const visit = (parent: number) => {
    for (const [child, ppid] of rows) {
      if (ppid !== parent) continue;
      found.push(child);
      visit(child);
    }
  };
  visit(pid);
  return found;
}

const cdkOut = writeAssembly({
  resources: {
    Store: {
      Type: 'AWS::DynamoDB::Table',
      Properties: {
        KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
      },
    },
    Work: { Type: 'AWS::SQS::Queue' },
    Api: { Type: 'AWS::ApiGateway::RestApi', Properties: {} },
    Ping: {
      Type: 'AWS::ApiGateway::Method',
      Properties: {
        RestApiId: { Ref: 'Api' },
        ResourceId: { 'Fn::GetAtt': ['Api', 'RootResourceId'] },
        HttpMethod: 'GET',
        AuthorizationType: 'AWS_IAM',
        Integration: {
          Type: 'AWS_PROXY',
          Uri: { 'Fn::Sub': 'arn:aws:apigateway:${AWS::Region}:lambda:path/functions/${PingFn.Arn}/invocations' },
        },
      },
    },
  },
  functions: { PingFn: { code: 'exports.handler = async () => ({ statusCode: 200, body: "pong" });' } },
});

test('a port in use is a one-line error', async () => {
  const blocker = net.createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve()));
  const port = (blocker.address() as net.AddressInfo).port;
  try {
    const run = start({ PORT: String(port), CDK_OUT: cdkOut });

    const code = await run.exited;

    expect(code).toBe(1);
    expect(run.output().trim().split('\n')).toEqual([
      `npm start: Port ${port} is already in use: stop whatever uses it or set PORT to another port`,
    ]);
  } finally {
    blocker.close();
  }
}, 30_000);

test('a missing Java is a one-line error', async () => {
  const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'no-java-'));
  fs.symlinkSync(process.execPath, path.join(bin, 'node'));
  const run = start({ PORT: '0', CDK_OUT: cdkOut, PATH: bin });

  const code = await run.exited;

  expect(code).toBe(1);
  const lines = run.output().trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^npm start: Java 17\+ is required for DynamoDB Local/);
}, 30_000);

test('SIGTERM stops every process it started, and a second start works', async () => {
  const outputsFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'outputs-')), 'outputs.json');
  for (const attempt of [1, 2]) {
    const run = start({ PORT: '0', CDK_OUT: cdkOut, OUTPUTS_FILE: outputsFile });
    await eventually(
      () => (run.output().includes('Ready in') ? true : undefined),
      30_000,
      `start ${attempt} to be ready`,
    );
    const outputs = JSON.parse(fs.readFileSync(outputsFile, 'utf8')) as {
      apiUrl: string;
      queues: Record<string, string>;
      tables: Record<string, string>;
    };
    const response = await signedFetch(`${outputs.apiUrl}/`, { method: 'GET' }); // Starts a function environment.
    expect(await response.text()).toBe('pong');
    expect(outputs.queues.Work).toBe('Work');
    expect(outputs.tables.Store).toBe('Store');
    const started = descendants(run.child.pid!);
    expect(started.length).toBeGreaterThanOrEqual(4); // tsx's node, java, fauxqs, the function

    run.child.kill('SIGTERM');
    const code = await run.exited;

    // 0 from the runtime; 143 when tsx, not hearing back within 30 ms on a busy machine, kills it outright.
    expect([0, 143]).toContain(code);
    // A clean stop removes its outputs: a file left behind sends the tools to endpoints nobody answers.
    if (code === 0) expect(fs.existsSync(outputsFile)).toBe(false);
    await eventually(
      () => (started.filter(isAlive).length === 0 ? true : undefined),
      30_000,
      'every started process to exit',
    );
  }
}, 90_000);

test('one Ctrl-C, delivered twice (by the terminal and relayed by tsx), stops cleanly: not forced, nothing left behind', async () => {
  const outputsFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'outputs-')), 'outputs.json');
  const run = start({ PORT: '0', CDK_OUT: cdkOut, OUTPUTS_FILE: outputsFile });
  await eventually(() => (run.output().includes('Ready in') ? true : undefined), 30_000, 'start to be ready');
  const started = descendants(run.child.pid!);
  const runtime = started.find((pid) => pid !== run.child.pid && isAlive(pid))!;

  // What a terminal's Ctrl-C does: the runtime gets SIGINT from the terminal, and again a moment later
  // from tsx, which got it too and relays it to its child.
  process.kill(runtime, 'SIGINT');
  await new Promise((resolve) => setTimeout(resolve, 200));
  if (isAlive(runtime)) process.kill(runtime, 'SIGINT');
  run.child.kill('SIGINT');
  await run.exited;

  expect(run.output()).not.toContain('forced to stop');
  expect(run.output()).toContain('SIGINT: stopping');
  await eventually(
    () => (started.filter(isAlive).length === 0 ? true : undefined),
    30_000,
    'every started process to exit',
  );
  expect(fs.readdirSync(path.dirname(outputsFile))).toEqual([]);
}, 90_000);
