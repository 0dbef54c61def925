import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The application's root: the nearest folder at or above `from` that holds `cdk.json`, where `cdk`
 * and the npm scripts run. Entry paths, `.local/` and the example's plug-ins are found from it. The
 * packages find it from the working directory, not from where they are installed: installed under
 * `node_modules/`, their own location says nothing about the application. Without a `cdk.json` above
 * `from`, it is `from` itself.
 *
 * @example
 * ```ts
 * findProjectDir('/work/app/lambdas/orders'); // '/work/app' when /work/app/cdk.json exists
 * ```
 */
export function findProjectDir(from: string = process.cwd()): string {
  const start = path.resolve(from);
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'cdk.json'))) return dir;
    if (path.dirname(dir) === dir) return start;
  }
}

/**
 * The application's root for this process (see {@link findProjectDir}): entry paths are relative to it.
 *
 * @example
 * ```ts
 * const file = path.join(PROJECT_DIR, 'lambdas/my-app/entry-points/create-order.ts');
 * ```
 */
export const PROJECT_DIR = findProjectDir();
