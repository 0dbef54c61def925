import '../cli/require-node'; // first: an unsupported Node stops here, before anything loads
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { EXIT, parseCommandLine, UsageError } from '../cli/exit';
import { PortInUseError } from './api/server';
import { LOCAL_SECRET_ACCESS_KEY } from './api/verify-signature';
import { assertJavaAvailable, EmulatorError } from './emulators';
import { consoleLogger } from './log';
import type { ExampleTooling } from '../domain';
import { loadDomain } from '../load-domain';
import { takeToolingFlag, toolingFlagHelp } from '../cli/tooling-flag';
import { servedApis } from './provider';
import { startRuntime, type LocalRuntime } from './runtime';
import { synthesize } from './template/cloud-assembly';
import { TemplateError } from './template/model';
import { PROJECT_DIR } from '@exactly-once/cdk/project-dir';

/**
 * `npm start`: synthesize the stack (with bundling, and the local runtime's
 * build: fault injection on for the proof kit), run it locally, print
 * where it is and how to call it, and stop everything on Ctrl-C or SIGTERM.
 */
const USAGE = `Usage: npm start [-- options]
  Synthesizes the stack, starts DynamoDB Local and fauxqs, hosts the functions and serves the API
  (state is in memory: a restart starts empty). Ctrl-C stops everything.
  --no-synth       reuse the cloud assembly in cdk.out instead of synthesizing
  --details        list each resource the runtime does not emulate or skips, by logical id (default: one line of counts)
  ${toolingFlagHelp(17)}
  -h, --help       this text
Environment:
  PORT=3001                    the API's port (default 3000)
  STACK=NAME                   the stack to run, when the app has several
  CDK_OUT=DIR                  the cloud assembly (default cdk.out)
  OUTPUTS_FILE=FILE            where the tools find the runtime (default .local/outputs.json)
  SHOW_METRICS=true, SHOW_SPANS=true    print the functions' metric and span lines too
  LOCAL_PROVIDER_KEYLESS=mail  local provider endpoints that ignore the idempotency key (comma-separated)
Exit codes: 0 stopped, 1 failed to start (the line says why), 2 usage error.`;

const projectDir = PROJECT_DIR;
const cdkOut = path.resolve(process.env.CDK_OUT ?? path.join(projectDir, 'cdk.out'));
const outputsFile = path.resolve(process.env.OUTPUTS_FILE ?? path.join(projectDir, '.local', 'outputs.json'));
// The proof kit (npm run loadtest) writes each run's fault plan here; no file, no faults.
const faultInjectionFile = path.resolve(process.env.FAULTS_FILE ?? path.join(projectDir, '.local', 'faults.json'));
const log = consoleLogger();
// The runtime's own SDK clients only talk to the emulators; their Node-version notice would open every start.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
/** A signal this soon after the first is the same Ctrl-C delivered twice (see stop), not a second press. */
const REPEATED_SIGNAL_MS = 1_000;
/** Set by the first SIGINT/SIGTERM; startup then stops what it started and exits. */
let stopping = false;

/** The command line, read before anything starts: `--help` and a mistyped flag start nothing. */
function commandLine(): { synth: boolean; details: boolean; toolingModule?: string } | 'help' {
  const { toolingModule, args } = takeToolingFlag(process.argv.slice(2));
  const { values } = parseCommandLine(() =>
    parseArgs({
      args,
      options: {
        'no-synth': { type: 'boolean', default: false },
        details: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }),
  );
  if (values.help) return 'help';
  return {
    synth: !values['no-synth'],
    details: values.details ?? false,
    ...(toolingModule === undefined ? {} : { toolingModule }),
  };
}

async function main(): Promise<void> {
  const started = Date.now();
  const options = commandLine();
  if (options === 'help') {
    console.log(USAGE);
    process.exit(EXIT.ok);
  }
  // The domain, once: the local provider serves its consumers' providers, and `Ready` suggests its requests.
  const domain = loadDomain(projectDir, { toolingModule: options.toolingModule });
  const port = Number(process.env.PORT ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UserError(`PORT must be a port number, got "${process.env.PORT}"`);
  // The cheap checks first, so a busy port or a missing Java fails in a second, not after synth.
  await assertPortFree(port);
  assertJavaAvailable();

  const shutdown = new AbortController();
  const state: { runtime?: LocalRuntime } = {};
  let stoppingSince = 0;
  const stop = async (signal: string) => {
    if (stopping) {
      // One Ctrl-C arrives twice: from the terminal to the whole process group, and relayed by tsx.
      // Only a second press, later, forces (and may leave the emulators' processes to the OS).
      if (Date.now() - stoppingSince < REPEATED_SIGNAL_MS) return;
      log('runtime', `${signal} again: forced to stop`);
      process.exit(130);
    }
    stopping = true;
    stoppingSince = Date.now();
    log('runtime', `${signal}: stopping (press Ctrl-C again to force)`);
    shutdown.abort();
    if (state.runtime === undefined) return; // Still starting: main() stops what it started.
    await state.runtime.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  watchAncestors(() => void stop('launcher gone'));

  if (options.synth) {
    log('runtime', 'cdk synth -c localRuntime=true (with bundling, fault injection on)...');
    await synthesize(projectDir, cdkOut, shutdown.signal);
  }
  if (stopping) process.exit(0);
  const runtime = await startRuntime({
    cdkOut,
    domain,
    stackName: process.env.STACK,
    port,
    log,
    outputsFile,
    faultInjectionFile,
    showMetrics: process.env.SHOW_METRICS === 'true',
    showSpans: process.env.SHOW_SPANS === 'true',
    keylessProviders: keylessProviders(process.env.LOCAL_PROVIDER_KEYLESS, domain),
  });
  state.runtime = runtime;
  if (stopping) {
    await runtime.stop();
    process.exit(0);
  }
  if (options.details) for (const line of runtime.inventory) log('runtime', line);
  else if (runtime.inventorySummary !== undefined) log('runtime', runtime.inventorySummary);
  printReady(runtime, domain, Date.now() - started);
}

function printReady(runtime: LocalRuntime, domain: ExampleTooling, elapsedMs: number): void {
  const { outputs } = runtime;
  const lines = [
    `Ready in ${(elapsedMs / 1000).toFixed(1)} s: ${outputs.stackName} on DynamoDB Local ${outputs.endpoints.dynamodb ?? '(none)'} and fauxqs ${outputs.endpoints.sqs ?? '(none)'}`,
    `Outputs written to ${path.relative(process.cwd(), outputsFile)}`,
  ];
  if (outputs.apiUrl !== undefined) {
    const { tryIt } = domain;
    lines.push(
      `API: ${outputs.apiUrl} (SigV4 checked as API Gateway does, secret access key "${LOCAL_SECRET_ACCESS_KEY}" for any access key id, which is the caller)`,
      ...(tryIt === undefined ? [] : ['Try it:', ...tryIt.map((call) => `  npm run call -- ${call}`)]),
    );
  }
  lines.push('Ctrl-C stops everything.');
  for (const line of lines) log('runtime', line);
}

/**
 * `kill <npm pid>`: npm's `sh -c` dies without passing SIGTERM on, and tsx
 * (our parent) lives on, so no signal ever reaches us. Watch the launching
 * processes instead (Linux /proc; elsewhere a no-op) and stop when one is gone.
 */
function watchAncestors(onGone: () => void): void {
  const ancestors: number[] = [];
  let pid = process.ppid;
  for (let depth = 0; depth < 4 && pid > 1; depth++) {
    ancestors.push(pid);
    try {
      pid = Number(fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[1]);
    } catch {
      break;
    }
  }
  const gone = (p: number) => {
    try {
      process.kill(p, 0);
      return false;
    } catch {
      return true;
    }
  };
  setInterval(() => {
    if (ancestors.some(gone)) onGone();
  }, 1_000).unref();
}

function assertPortFree(port: number): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'EADDRINUSE' ? new PortInUseError(port) : error),
    );
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve()));
  });
}

class UserError extends Error {}

/** `LOCAL_PROVIDER_KEYLESS=mail` (comma-separated): local provider endpoints that ignore the key. */
function keylessProviders(value: string | undefined, domain: ExampleTooling): string[] {
  const names = (value ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  const served = servedApis(domain.consumers, domain.localProviders).map((api) => api.name);
  for (const name of names)
    if (!served.includes(name))
      throw new UserError(
        `LOCAL_PROVIDER_KEYLESS names a provider the consumers call (${served.join(', ')}), got "${name}"`,
      );
  return names;
}

/** Errors a user can act on are one line; anything else is a bug and keeps its stack. */
function isUserError(error: unknown): error is Error {
  return (
    error instanceof UserError ||
    error instanceof TemplateError ||
    error instanceof EmulatorError ||
    error instanceof PortInUseError
  );
}

main().catch((error: unknown) => {
  if (stopping) process.exit(0); // Interrupted while starting: whatever failed was being stopped anyway.
  if (error instanceof UsageError) {
    console.error(`npm start: ${error.message}\n\n${USAGE}`);
    process.exit(EXIT.usage);
  }
  if (isUserError(error)) console.error(`npm start: ${error.message}`);
  else console.error('npm start failed:', error);
  process.exit(EXIT.failed);
});
