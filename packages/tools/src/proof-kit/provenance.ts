import { spawnSync } from 'node:child_process';
import { PROJECT_DIR } from '@exactly-once/cdk/project-dir';

/**
 * Where and how a proof run was made, so a person can trust its report and make it again: the code
 * (commit), the target (stack or local, region), the Node that ran the kit, the load and the faults with
 * their rates, and the exact command that reproduces the run (the seed pinned).
 */
export interface Provenance {
  /** `git rev-parse HEAD`, with ` (uncommitted changes)` when the tree differs; `unknown` outside a checkout. */
  commit: string;
  /** `local`, or the deployed stack's name. */
  stack: string;
  region: string;
  /** `process.version`. */
  node: string;
  /** `20 intents on 4 connections, as fast as possible`. */
  load: string;
  /** `fault rate 0.1 (relay-crash 1)`, or `no faults`. */
  rates: string;
  /** `npm run loadtest -- --profile smoke --faults all --seed 7`. */
  command: string;
}

/** The repository the kit runs from: the commit is read there, wherever the command was run. */
const REPOSITORY = PROJECT_DIR;

/**
 * The commit the kit ran from, `unknown` where git or a checkout is missing.
 *
 * @example
 * ```ts
 * gitCommit(); // '659632a1f0...' or '659632a1f0... (uncommitted changes)' or 'unknown'
 * ```
 */
export function gitCommit(cwd: string = REPOSITORY): string {
  const head = spawnSync('git', ['rev-parse', 'HEAD'], { cwd, encoding: 'utf8' });
  if (head.status !== 0 || head.stdout.trim() === '') return 'unknown';
  const status = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd, encoding: 'utf8' });
  const dirty = status.status === 0 && status.stdout.trim() !== '';
  return `${head.stdout.trim()}${dirty ? ' (uncommitted changes)' : ''}`;
}

/**
 * The command that makes the run again: the arguments it was given, with `--seed` set to the seed it used
 * (a run without one drew its seed from the clock), each quoted for a POSIX shell where it needs it.
 *
 * @example
 * ```ts
 * reproduceCommand(['--profile', 'smoke', '--faults', 'all'], 7);
 * // 'npm run loadtest -- --profile smoke --faults all --seed 7'
 * ```
 */
export function reproduceCommand(args: readonly string[], seed: number): string {
  const kept: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--seed')
      i += 1; // and its value
    else if (!args[i].startsWith('--seed=')) kept.push(args[i]);
  }
  return ['npm run loadtest --', ...kept, '--seed', String(seed)].map(shellQuoted).join(' ');
}

function shellQuoted(word: string): string {
  return word === 'npm run loadtest --' || /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
