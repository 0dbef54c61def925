import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

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
 * A copy of the repository in a new temporary folder (returned; the caller removes it): the tracked and
 * untracked-but-not-ignored files, node_modules linked to this one's.
 */
export function copyOfRepository(repo: string, prefix = 'repo-copy-'): string {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: repo,
    encoding: 'utf8',
  })
    .split('\0')
    .filter((path) => path !== '' && existsSync(join(repo, path)));
  const copy = mkdtempSync(join(tmpdir(), prefix));
  for (const path of files) {
    mkdirSync(dirname(join(copy, path)), { recursive: true });
    cpSync(join(repo, path), join(copy, path));
  }
  linkNodeModules(repo, copy);
  return copy;
}

/** The name the another-domain tests give the domain that replaces the example: not the example's, so a test assuming that name fails there. */
export const NEW_DOMAIN = 'bookings';

/**
 * A copy of the repository (as {@link copyOfRepository}) in which `npm run new:domain <name>` has replaced
 * the example, as a fork does: the example and its tests removed, the skeleton domain written under
 * `name`, package.json, lib/app-stack.ts and the guarantee pages pointed at it. Throws with the command's
 * output when it fails.
 */
export function copyWithNewDomain(repo: string, name = NEW_DOMAIN): string {
  const copy = copyOfRepository(repo, 'domain-copy-');
  const made = runInCopy(copy, 'tsx', ['packages/tools/src/scaffolder/new-domain.ts', name]);
  if (made.status !== 0) throw new Error(`npm run new:domain ${name} failed in the copy:\n${made.output}`);
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
