import * as path from 'node:path';
// The modules themselves, as every other module gets them: an `import * as` namespace may be a copy.
/* eslint-disable @typescript-eslint/no-require-imports */
const fs: typeof import('node:fs') = require('node:fs');
const childProcess: typeof import('node:child_process') = require('node:child_process');
/* eslint-enable @typescript-eslint/no-require-imports */

/** Files of the repository a domain in place of the example changes (its folders: {@link domainFolders}). */
const CHANGED = /^(package\.json|README\.md|lib\/app-stack\.ts|bin\/app\.ts|docs\/)/;
const domainFolders = (example: string) => ['lambdas', 'lib', 'tooling'].map((folder) => `${folder}/${example}/`);
/** Folders whose listing changes with the domain (its files, its tests). */
const WALKED = /^(|lambdas|lib|tooling|bin|docs|test)$/;

type AnyFunction = (...args: unknown[]) => unknown;

/**
 * Watches, until `stop()`, what code running in this process does that lets the domain in place of the
 * example `example` change its outcome: reading package.json (where the tools' locator finds the domain's
 * name), README.md, the docs, lib/app-stack.ts, bin/app.ts or a file of the example's folders, listing the
 * root or one of the application's folders, or starting a process (a command reads whatever it needs).
 * `reads` names each, once. Paths are taken relative to `root`; node_modules is not the domain.
 *
 * @example
 * ```ts
 * const watching = watchDomainReads(ROOT, 'rentals');
 * runTheTest();
 * watching.stop();
 * if (watching.reads.size > 0) throw new Error([...watching.reads].join(', '));
 * ```
 */
export function watchDomainReads(root: string, example: string): { reads: Set<string>; stop: () => void } {
  const reads = new Set<string>();
  const folders = domainFolders(example);
  const restore: (() => void)[] = [];
  const relative = (file: unknown): string | undefined => {
    if (typeof file !== 'string' && !(file instanceof URL)) return undefined;
    const rel = path.relative(root, path.resolve(file instanceof URL ? file.pathname : file));
    return rel.startsWith('..') || path.isAbsolute(rel) || rel.includes('node_modules') ? undefined : rel;
  };
  // The modules are the process's (a Jest worker's), shared with the files it runs next: stop() puts the
  // originals back.
  const watch = <T extends object>(module: T, names: (keyof T)[], seen: (name: string, first: unknown) => void) => {
    for (const name of names) {
      const original = module[name] as AnyFunction;
      module[name] = function spy(this: unknown, ...args: unknown[]) {
        seen(String(name), args[0]);
        return original.apply(this, args);
      } as T[keyof T];
      restore.push(() => (module[name] = original as T[keyof T]));
    }
  };
  watch(fs, ['readFileSync', 'existsSync', 'statSync'], (_name, file) => {
    const rel = relative(file);
    if (rel !== undefined && (CHANGED.test(rel) || folders.some((f) => rel.startsWith(f)))) reads.add(`read ${rel}`);
  });
  watch(fs, ['readdirSync'], (_name, folder) => {
    const rel = relative(folder);
    if (rel !== undefined && WALKED.test(rel)) reads.add(`listed ${rel === '' ? 'the root' : rel}`);
  });
  watch(childProcess, ['spawn', 'spawnSync', 'execFile', 'execFileSync', 'exec', 'execSync', 'fork'], (name, command) =>
    reads.add(`${name} ${String(command)}`),
  );
  return { reads, stop: () => restore.splice(0).forEach((put) => put()) };
}
