'use strict';
/**
 * Runs a non-Node emulator (DynamoDB Local's JVM) on behalf of the runtime:
 * `node guardian.js <command> [args...]`, spawned with an IPC channel. Signals
 * are passed on; when the runtime goes away, even killed outright, the
 * command is killed too, so no JVM outlives `npm start`.
 */
const { spawn } = require('node:child_process');

const [command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: 'inherit' });
child.on('error', (error) => {
  console.error(error.message);
  process.exit(127);
});
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => child.kill(signal));
process.on('disconnect', () => {
  child.kill('SIGKILL');
  process.exit(0);
});
