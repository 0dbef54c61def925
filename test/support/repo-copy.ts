import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { exampleName, exampleReach } from './example-reach';

/**
 * Runs a tool of node_modules/.bin in a copy of the repository (whose node_modules links to this
 * one's): its exit status and output, never a throw, so a test asserts both.
 */
export function runInCopy(copy: string, tool: string, args: string[]): { status: number | null; output: string } {
  const result = spawnSync(join(copy, 'node_modules/.bin', tool), args, {
    cwd: copy,
    encoding: 'utf8',
    // A whole test tier's output can pass spawnSync's 1 MB default, which would kill the run.
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, CDK_DISABLE_CLI_TELEMETRY: 'true', FORCE_COLOR: '0' },
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

/**
 * A copy of the repository (in a new temporary folder, returned) with the example replaced by the domain
 * whose files are `domain` (paths relative to the root, and texts), as the another-domain test makes it: the tracked and untracked-but-not-ignored files,
 * without the example's folders (lambdas/<example>, tooling/<example>, lib/<example>), the tests that reach them, the guarantee registry;
 * then the fixture's files in their place, and node_modules linked to this one's. The caller removes it.
 */
export function copyWithOtherDomain(repo: string, domain: readonly { path: string; text: string }[]): string {
  const example = exampleName(repo);
  const isExample = (path: string) =>
    path.startsWith(`lambdas/${example}/`) ||
    path.startsWith(`tooling/${example}/`) ||
    path.startsWith(`lib/${example}/`);
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: repo,
    encoding: 'utf8',
  })
    .split('\0')
    .filter((path) => path !== '' && existsSync(join(repo, path)));
  const reaches = exampleReach(repo);
  const copy = mkdtempSync(join(tmpdir(), 'domain-copy-'));
  const place = (path: string, write: (to: string) => void) => {
    mkdirSync(dirname(join(copy, path)), { recursive: true });
    write(join(copy, path));
  };
  for (const path of files) {
    const examplesTest = path.startsWith('test/') && reaches(path);
    if (isExample(path) || examplesTest || path.startsWith('test/guarantees/')) continue;
    place(path, (to) => cpSync(join(repo, path), to));
  }
  for (const { path, text } of domain) place(path, (to) => writeFileSync(to, text));
  linkNodeModules(repo, copy);
  return copy;
}

/**
 * A copy's node_modules: a link to each of `repo`'s installed packages, except the workspace packages
 * (`@exactly-once/*`), which link to the copy's own `packages/` where it has them. Linking the whole
 * folder would resolve `@exactly-once/runtime` to the repository's files, not to the copy's.
 */
export function linkNodeModules(repo: string, copy: string): void {
  const modules = join(copy, 'node_modules');
  mkdirSync(join(modules, WORKSPACE_SCOPE), { recursive: true });
  for (const name of readdirSync(join(repo, 'node_modules'))) {
    if (name !== WORKSPACE_SCOPE) symlinkSync(join(repo, 'node_modules', name), join(modules, name), 'dir');
  }
  for (const name of readdirSync(join(repo, 'node_modules', WORKSPACE_SCOPE))) {
    const own = join(copy, 'packages', name);
    if (existsSync(own)) symlinkSync(own, join(modules, WORKSPACE_SCOPE, name), 'dir');
  }
}

const WORKSPACE_SCOPE = '@exactly-once';
