import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';

const SPECIFIER = /(?:from|import\(|require\(|jest\.mock\(|jest\.doMock\()\s*['"](\.{1,2}\/[^'"]+)['"]/g;

/**
 * The tag a test file (or a test-support file) carries when it reaches the example in a way its imports
 * do not show: it drives the example's HTTP API on the local runtime, or asserts what only the example's
 * stack holds. `npm run new:domain` removes it with the example, and every test file importing it.
 */
export const REACHES_EXAMPLE_TAG = '@reachesExample';

/** The folders that are the example: `lambdas/<example>/`, `lib/<example>/`, `tooling/<example>/`. */
export const exampleFolders = (example: string): string[] => [
  `lambdas/${example}/`,
  `lib/${example}/`,
  `tooling/${example}/`,
];

/**
 * Whether a file under test/ reaches the example `example`: it imports one of the example's folders, or a
 * test file that reaches it (relative imports, followed through test/), names one of those folders, or
 * carries {@link REACHES_EXAMPLE_TAG}. A test that does not reach the example holds whatever the domain
 * is: `npm run new:domain` keeps it and removes the others. Paths are relative to `root`.
 *
 * @example
 * ```ts
 * const reaches = exampleReach(process.cwd(), 'shop');
 * const examplesTests = testFiles.filter(reaches);
 * ```
 */
export function exampleReach(root: string, example: string): (file: string) => boolean {
  const folders = exampleFolders(example);
  const named = new RegExp(folders.map((f) => f.replace(/[/.-]/g, '\\$&')).join('|'));
  const isExample = (file: string) => folders.some((folder) => file.startsWith(folder));
  const reaches = new Map<string, boolean>();
  const visit = (file: string): boolean => {
    if (isExample(file)) return true;
    if (!file.startsWith('test/') || !file.endsWith('.ts')) return false;
    const known = reaches.get(file);
    if (known !== undefined) return known;
    // A circle of test files reaches only through a file outside it: false until shown otherwise.
    reaches.set(file, false);
    const source = readFileSync(join(root, file), 'utf8');
    const found =
      source.includes(REACHES_EXAMPLE_TAG) ||
      named.test(source) ||
      [...source.matchAll(SPECIFIER)].some(([, specifier]) => {
        const base = normalize(join(dirname(file), specifier));
        const target = [`${base}.ts`, join(base, 'index.ts'), base].find((c) => existsSync(join(root, c)));
        return target !== undefined && visit(target);
      });
    reaches.set(file, found);
    return found;
  };
  return visit;
}
