import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';

const SPECIFIER = /(?:from|import\(|require\(|jest\.mock\()\s*['"](\.{1,2}\/[^'"]+)['"]/g;

/** The example's folder name, as package.json names it for the tools (`exactlyOnce.example`). */
export function exampleName(root: string): string {
  return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exactlyOnce: { example: string } })
    .exactlyOnce.example;
}

/**
 * Whether a test file reaches the example (lambdas/<example>/, lib/<example>/, tooling/<example>/), by its
 * own imports or those of the test-support files it imports, or by naming those folders: a test that
 * does not reach it runs with the example deleted (the another-domain test deletes exactly those).
 */
export function exampleReach(root: string): (file: string) => boolean {
  const example = exampleName(root);
  const folders = [`lambdas/${example}/`, `lib/${example}/`, `tooling/${example}/`];
  const named = new RegExp(folders.map((f) => f.replace(/\//g, '\\/')).join('|'));
  const isExample = (file: string) => folders.some((folder) => file.startsWith(folder));
  const reaches = new Map<string, boolean>();
  const visit = (file: string): boolean => {
    if (isExample(file)) return true;
    if (!file.startsWith('test/') || !file.endsWith('.ts')) return false;
    const known = reaches.get(file);
    if (known !== undefined) return known;
    reaches.set(file, false);
    const source = readFileSync(join(root, file), 'utf8');
    const targets = [...source.matchAll(SPECIFIER)].map(([, specifier]) => normalize(join(dirname(file), specifier)));
    const found = targets.some((base) => {
      const target = [`${base}.ts`, join(base, 'index.ts'), base].find((c) => existsSync(join(root, c)));
      return target !== undefined && visit(target);
    });
    reaches.set(file, found || named.test(source));
    return reaches.get(file)!;
  };
  return visit;
}
