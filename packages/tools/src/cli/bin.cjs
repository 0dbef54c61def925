#!/usr/bin/env node
'use strict';
/**
 * `exactly-once <command> [args]`: the tools as one command a fork runs from its application's root
 * (`npx exactly-once sim --help`), the same entry points the repository's npm scripts run. The Node check
 * comes first, as in the npm scripts, so a wrong Node is refused before anything loads. Each command runs in
 * a child Node with tsx as its loader (the tools ship as TypeScript), its arguments passed through untouched,
 * so its own `--help` answers; the child's exit status is this command's.
 *
 * Plain CommonJS, like node-version.cjs: it must start on any Node to refuse an old one.
 */
const { spawn } = require('node:child_process');
const { join } = require('node:path');
const { pathToFileURL } = require('node:url');
const { requireSupportedNode } = require('./node-version.cjs');

/** Each command, the entry point it runs (under packages/tools/src) and what it does, in one line. */
const COMMANDS = {
  start: ['local-runtime/start.ts', 'start the local runtime (DynamoDB Local, fauxqs, the functions)'],
  call: ['local-runtime/call.ts', 'send one signed request to the local API'],
  loadtest: ['proof-kit/cli.ts', 'run the proof kit: load, faults, verification and report'],
  dlq: ['dlq/cli.ts', 'list, inspect and redrive dead-lettered messages'],
  bench: ['bench/cli.ts', "measure the pipeline's rate, latency and effect lag locally"],
  sim: ['simulation/cli.ts', 'run the deterministic simulation'],
  'new:consumer': ['scaffolder/new-consumer.ts', 'scaffold a consumer'],
  'new:domain': ['scaffolder/new-domain.ts', 'replace the example with a skeleton domain'],
};

/** Exit statuses, as every command has them (cli/exit.ts). */
const EXIT_OK = 0;
const EXIT_USAGE = 2;

const USAGE = [
  'Usage: exactly-once <command> [args]   (run from the application root, where cdk.json is)',
  '',
  'Commands:',
  ...Object.entries(COMMANDS).map(([name, [, what]]) => `  ${name.padEnd(14)}${what}`),
  '',
  'Options:',
  "  -h, --help    this list; `exactly-once <command> --help` prints a command's own usage",
  '',
  'Exit codes: 0 done, 1 failed, 2 usage error, 3 the local runtime is not running',
].join('\n');

/** Runs `file` in a child Node with tsx's loader, passing `args` and signals through; exits with its status. */
function runTool(file, args) {
  // tsx resolved from this package, not the working directory: a fork's root need not depend on tsx itself.
  const tsx = pathToFileURL(require.resolve('tsx')).href;
  const child = spawn(process.execPath, ['--import', tsx, join(__dirname, '..', file), ...args], { stdio: 'inherit' });
  // Ctrl-C reaches the child from the terminal already (one process group); a SIGTERM or SIGHUP sent to this
  // process alone is passed on, or the local runtime would be orphaned with its emulators still running.
  const ignoreInterrupt = () => {};
  const forward = (signal) => child.kill(signal);
  process.on('SIGINT', ignoreInterrupt);
  process.on('SIGTERM', forward);
  process.on('SIGHUP', forward);
  child.on('error', (error) => {
    process.stderr.write(`exactly-once: could not start ${file}: ${error.message}\n`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    process.removeListener('SIGINT', ignoreInterrupt);
    process.removeListener('SIGTERM', forward);
    process.removeListener('SIGHUP', forward);
    if (signal !== null) process.kill(process.pid, signal);
    else process.exit(code ?? 1);
  });
}

function main(argv) {
  requireSupportedNode();
  const [command, ...args] = argv;
  if (command === '-h' || command === '--help') {
    process.stdout.write(`${USAGE}\n`);
    process.exit(EXIT_OK);
  }
  const entry = command === undefined ? undefined : COMMANDS[command];
  if (entry === undefined) {
    process.stderr.write(
      `${command === undefined ? 'No command given' : `Unknown command "${command}"`}\n\n${USAGE}\n`,
    );
    process.exit(EXIT_USAGE);
  }
  runTool(entry[0], args);
}

main(process.argv.slice(2));
