/**
 * The Node check every entry point runs first (packages/tools/src/cli/require-node.ts), and the npm scripts run with
 * plain `node` before `tsx` loads (package.json): its code is node-version.cjs, CommonJS that any Node
 * runs, so an old one is refused within a second, naming the version found, the one needed and how to
 * get it. The minimum is package.json's `engines.node`; the baseline is `.nvmrc`.
 *
 * @example
 *   nodeVersionProblem('20.20.2', projectNodeRequirement());
 *   // 'Node v20.20.2 is not supported: this project needs Node >=22.22.2 (24 is the baseline). ...'
 *   requireSupportedNode(); // first thing in an entry point: exits 1 with that line on an old Node
 */
export {
  nodeVersionProblem,
  projectNodeRequirement,
  requireSupportedNode,
  UNSUPPORTED_NODE_EXIT,
  type NodeRequirement,
} from './node-version.cjs';
