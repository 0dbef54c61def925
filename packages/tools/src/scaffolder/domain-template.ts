import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * The skeleton domain `npm run new:domain` writes (packages/tools/templates/domain): a POST /bookings
 * on the mechanism's idempotent command, one FIFO consumer (`rooms`) with its ledger and provider, its
 * stack, the tools' plug-ins (proof kit, simulation) and its tests. Shipped with the tools, so a fork
 * that upgrades them gets the skeleton of its version.
 */
export const DOMAIN_TEMPLATE_DIR = join(__dirname, '..', '..', 'templates', 'domain');

/** What stands for the domain's folder name in the template's paths and texts. */
export const DOMAIN_PLACEHOLDER = '__example__';

/**
 * The template's files for a domain named `name`: each path (relative to the application's root) and
 * text, with {@link DOMAIN_PLACEHOLDER} replaced by `name` in both. The stack is
 * `lib/<name>/<name>-stack.ts`, exporting `ExactlyOnceStack`, as lib/app-stack.ts imports it.
 *
 * @example
 * ```ts
 * for (const { path, text } of domainTemplate('payments')) writeFileSync(join(root, path), text);
 * ```
 */
export function domainTemplate(name: string, dir = DOMAIN_TEMPLATE_DIR): { path: string; text: string }[] {
  return filesUnder(dir).map((file) => ({
    path: file.replaceAll(DOMAIN_PLACEHOLDER, name),
    text: readFileSync(join(dir, file), 'utf8').replaceAll(DOMAIN_PLACEHOLDER, name),
  }));
}

/**
 * Every file under `dir`, relative to `root`, in name order; folders named in `skipped` are not read.
 *
 * @example
 * ```ts
 * const tests = filesUnder(join(root, 'test'), root, new Set(['node_modules']));
 * ```
 */
export function filesUnder(dir: string, root = dir, skipped: ReadonlySet<string> = new Set()): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((entry) => {
      if (skipped.has(entry)) return [];
      const path = join(dir, entry);
      return statSync(path).isDirectory() ? filesUnder(path, root, skipped) : [relative(root, path)];
    });
}
