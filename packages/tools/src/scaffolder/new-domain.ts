import '../cli/require-node'; // first: an unsupported Node stops here, before anything loads
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { EXIT, parseCommandLine as parsedOrUsageError, UsageError } from '../cli/exit';
import { domainTemplate, filesUnder } from './domain-template';
import { exampleFolders, exampleReach } from './example-reach';
import { PROJECT_DIR } from '@exactly-once/cdk/project-dir';
import { exampleFolderName } from '../load-domain';

/**
 * `npm run new:domain -- <name> [--dry-run]`: replaces the example with a skeleton domain named
 * `<name>` (packages/tools/templates/domain: a POST on the idempotent command, one FIFO consumer with
 * its ledger and provider, its stack, the tools' plug-ins and its tests), so `npm test` passes as it
 * stands and the fork edits the skeleton into its own domain. It removes the example's folders
 * (`lambdas/<example>/`, `lib/<example>/`, `tooling/<example>/`) and every test that reaches them
 * (example-reach.ts: by import, by naming them, or tagged `@reachesExample`), writes the skeleton under
 * `<name>`, sets `exactlyOnce.example` in package.json and the stack line of lib/app-stack.ts, then
 * renders the guarantee pages again (`npm run render:guarantees`, where the application has it).
 *
 * Everything is checked before anything is written: a bad name, the example's own name, a folder or a
 * file of the skeleton that exists, a package.json without `exactlyOnce.example`, a lib/app-stack.ts
 * without the example's stack line. Then it exits 1 with one line on stderr and nothing changed.
 */

const USAGE = 'usage: npm run new:domain -- <name> [--dry-run]';
const HELP = `Usage: npm run new:domain -- <name> [--dry-run]

Replaces the example with a skeleton domain named <name>: removes lambdas/<example>/, lib/<example>/,
tooling/<example>/ and every test that reaches them, writes the skeleton (an entity behind an idempotent
POST, one FIFO consumer, its stack, the tools' plug-ins, its tests) under <name>, and points
package.json and lib/app-stack.ts at it. npm test passes on the result as it stands.

  <name>     the domain's folder name: 2-32 lower-case letters, digits and hyphens, starting with a letter
  --dry-run  print what would be removed and written, change nothing`;
const NAME = /^[a-z][a-z0-9-]{1,31}$/;
/** The folders a test may sit in; node_modules and build output are never read. */
const SKIPPED_DIRS = new Set(['node_modules', 'cdk.out', '.git']);

class Refused extends Error {}

/** What the command removes and writes, decided before anything changes. */
export interface DomainPlan {
  readonly example: string;
  readonly name: string;
  /** Files removed: the example's folders' and the tests (under test/) that reach them, relative to the root. */
  readonly removed: readonly string[];
  readonly writes: readonly { path: string; text: string }[];
}

export async function main(argv: string[], root = PROJECT_DIR): Promise<number> {
  try {
    if (argv.includes('--help') || argv.includes('-h')) {
      console.log(HELP);
      return EXIT.ok;
    }
    const { name, dryRun } = parseCommandLine(argv);
    const plan = planDomain(name, root);
    if (dryRun) {
      report(plan, 'would remove', 'would write');
      return EXIT.ok;
    }
    apply(plan, root);
    report(plan, 'removed', 'wrote');
    renderGuarantees(root);
    return EXIT.ok;
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`new:domain: ${error.message} (${USAGE})`);
      return EXIT.usage;
    }
    if (!(error instanceof Refused)) throw error;
    console.error(`new:domain: ${error.message}`);
    return EXIT.failed;
  }
}

function parseCommandLine(argv: string[]): { name: string; dryRun: boolean } {
  const parsed = parsedOrUsageError(() =>
    parseArgs({ args: argv, options: { 'dry-run': { type: 'boolean' } }, allowPositionals: true }),
  );
  const [name, ...extra] = parsed.positionals;
  if (name === undefined) throw new UsageError('name the new domain');
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
  return { name, dryRun: parsed.values['dry-run'] === true };
}

/**
 * What `new:domain <name>` would remove and write in the application at `root`, or a {@link Refused}
 * saying why it cannot.
 */
export function planDomain(name: string, root: string): DomainPlan {
  if (!NAME.test(name))
    throw new Refused(
      `"${name}" is not a domain name: 2-32 lower-case letters, digits and hyphens, starting with a letter`,
    );
  const example = exampleOf(root);
  if (name === example) throw new Refused(`"${name}" is already the example's name`);
  for (const folder of exampleFolders(name))
    if (existsSync(join(root, folder))) throw new Refused(`${folder} exists: choose another name`);
  stackLine(root, example);

  const examplesFiles = exampleFolders(example).flatMap((folder) => filesIn(root, folder));
  const reaches = exampleReach(root, example);
  const tests = filesIn(root, 'test').filter((file) => file.endsWith('.ts') && reaches(file));
  const removed = [...examplesFiles, ...tests];
  const gone = new Set(removed);
  const writes = domainTemplate(name);
  const clash = writes.find(({ path }) => existsSync(join(root, path)) && !gone.has(path));
  if (clash !== undefined) throw new Refused(`${clash.path} exists and is not the example's: move it first`);
  return { example, name, removed, writes };
}

function apply(plan: DomainPlan, root: string): void {
  for (const file of plan.removed) rmSync(join(root, file));
  for (const folder of exampleFolders(plan.example)) rmSync(join(root, folder), { recursive: true, force: true });
  removeEmptyFolders(join(root, 'test'));
  for (const { path, text } of plan.writes) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  const manifest = join(root, 'package.json');
  writeFileSync(
    manifest,
    readFileSync(manifest, 'utf8').replace(EXAMPLE_ENTRY, (entry) =>
      entry.replace(`"${plan.example}"`, `"${plan.name}"`),
    ),
  );
  const { path, line } = stackLine(root, plan.example);
  const text = readFileSync(path, 'utf8');
  const pointed = line.replace(/from '[^']+'/, `from './${plan.name}/${plan.name}-stack'`);
  writeFileSync(path, text.replace(line, pointed));
  dropFromSlowestFiles(root, plan.removed);
}

/**
 * The test sequencer's list of the slowest files (test/support/slowest-files.cjs, where the application
 * has it), without the tests removed with the example: a list naming files that are gone fails its own test.
 */
function dropFromSlowestFiles(root: string, removed: readonly string[]): void {
  const list = join(root, 'test', 'support', 'slowest-files.cjs');
  if (!existsSync(list)) return;
  const gone = new Set(removed);
  const entry = /^\s*'([^']+)',\s*$/;
  const kept = readFileSync(list, 'utf8')
    .split('\n')
    .filter((line) => !gone.has(entry.exec(line)?.[1] ?? ''));
  writeFileSync(list, kept.join('\n'));
}

/** `"example": "<name>"` inside package.json's `exactlyOnce`, as written there. */
const EXAMPLE_ENTRY = /"example"\s*:\s*"[^"]*"/;

function exampleOf(root: string): string {
  try {
    const example = exampleFolderName(root);
    // The entry is rewritten in place (the file's own formatting kept): it must be there as written.
    if (EXAMPLE_ENTRY.test(readFileSync(join(root, 'package.json'), 'utf8'))) return example;
  } catch {
    // No package.json, or none naming a valid example: refused below, in this command's words.
  }
  throw new Refused('package.json names no example (`exactlyOnce.example`): there is nothing to replace');
}

/** lib/app-stack.ts's import of the example's stack: the line the command points at the new domain. */
function stackLine(root: string, example: string): { path: string; line: string } {
  const path = join(root, 'lib', 'app-stack.ts');
  const line = existsSync(path)
    ? readFileSync(path, 'utf8')
        .split('\n')
        .find((text) => text.includes(`from './${example}/`))
    : undefined;
  if (line === undefined)
    throw new Refused(
      `lib/app-stack.ts has no import from './${example}/': the application's stack cannot be pointed at the new domain`,
    );
  return { path, line };
}

/** The files under `folder` (relative to `root`), if it exists; node_modules and build output are never read. */
function filesIn(root: string, folder: string): string[] {
  const dir = join(root, folder);
  return existsSync(dir) ? filesUnder(dir, root, SKIPPED_DIRS) : [];
}

function removeEmptyFolders(dir: string): void {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return;
  for (const entry of readdirSync(dir)) removeEmptyFolders(join(dir, entry));
  if (readdirSync(dir).length === 0) rmdirSync(dir);
}

function report(plan: DomainPlan, removedVerb: string, wroteVerb: string): void {
  const tests = plan.removed.filter((file) => file.startsWith('test/')).length;
  console.log(
    `new:domain: ${removedVerb} the example "${plan.example}" (${plan.removed.length - tests} files) and ${tests} tests that reach it`,
  );
  for (const file of plan.removed) console.log(`  - ${file}`);
  console.log(`new:domain: ${wroteVerb} the skeleton domain "${plan.name}" (${plan.writes.length} files):`);
  for (const { path } of plan.writes) console.log(`  + ${path}`);
  console.log(
    `Next: npm test (it passes as written), then make the skeleton your domain; README.md and docs/ still describe "${plan.example}".`,
  );
}

/** The guarantee pages list the example's guarantees: rendered again for the new one, where the application can. */
function renderGuarantees(root: string): void {
  const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts?: Record<string, string> })
    .scripts;
  if (scripts?.['render:guarantees'] === undefined) return;
  const result = spawnSync('npm', ['run', '-s', 'render:guarantees'], { cwd: root, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`npm run render:guarantees failed:\n${result.stdout}${result.stderr}`);
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (error: unknown) => {
      console.error(error);
      process.exitCode = EXIT.failed;
    },
  );
}
