/**
 * Run as a process of its own (`node --import tsx test/support/env-reads-at-load.ts <module>...`): loads
 * each module in turn under an environment that holds only what Node needs to run (PATH, HOME), and
 * prints, as one JSON line, per module the variables its loading read and the error it threw, if any.
 * A variable is counted as read when it is looked up or tested for, whether or not it is set; only the
 * first module that reads one is charged with it, since modules load once.
 */
import * as path from 'node:path';

const KEPT = ['PATH', 'HOME'];
const given: Record<string, string> = {};
for (const name of KEPT) if (process.env[name] !== undefined) given[name] = process.env[name];

let reads = new Set<string>();
const record = (name: string | symbol) => {
  if (typeof name === 'string') reads.add(name);
};
process.env = new Proxy(given, {
  get: (target, name) => (record(name), Reflect.get(target, name)),
  has: (target, name) => (record(name), Reflect.has(target, name)),
  getOwnPropertyDescriptor: (target, name) => (record(name), Reflect.getOwnPropertyDescriptor(target, name)),
}) as NodeJS.ProcessEnv;

const report: Record<string, { reads: string[]; error?: string }> = {};
for (const module of process.argv.slice(2)) {
  reads = new Set();
  let error: string | undefined;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the modules are named on the command line.
    require(path.resolve(module));
  } catch (thrown) {
    error = thrown instanceof Error ? thrown.message : String(thrown);
  }
  report[module] = { reads: [...reads].sort(), ...(error === undefined ? {} : { error }) };
}
process.stdout.write(JSON.stringify(report) + '\n');
