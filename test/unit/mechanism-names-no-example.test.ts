import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { exampleName } from '../support/example-reach';

/**
 * The mechanism and the tools are what a fork keeps after deleting the example, so no file of theirs
 * (code, comment or README) names a path of the example (lambdas/<example>/, lib/<example>/,
 * tooling/<example>/) or of the test fixtures (test/fixtures/): deleted with the example, such a
 * reference would point at nothing. Imports are the import-graph check's; this reads the text.
 */
const ROOT = path.join(__dirname, '..', '..');
// The folders as package.json names the example, so a fork that renames it is checked for its own name.
const EXAMPLE = exampleName(ROOT);
const KEPT_FOLDERS = ['packages/runtime/src', 'packages/cdk/src', 'packages/tools/src'];
const EXAMPLE_PATH = new RegExp(
  [`lambdas/${EXAMPLE}/`, `lib/${EXAMPLE}/`, `tooling/${EXAMPLE}/`, 'test/fixtures/']
    .map((prefix) => `(?<![\\w.-])${prefix.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`)
    .join('|'),
);

function filesUnder(folder: string): string[] {
  return readdirSync(path.join(ROOT, folder), { recursive: true, encoding: 'utf8' })
    .map((relative) => path.posix.join(folder, relative.split(path.sep).join('/')))
    .filter((file) => statSync(path.join(ROOT, file)).isFile())
    .sort();
}

/** Every `file:line: text` of the files under `folders` that names a path of the example. */
function examplePathsNamed(files: readonly string[]): string[] {
  return files.flatMap((file) =>
    readFileSync(path.join(ROOT, file), 'utf8')
      .split('\n')
      .flatMap((line, i) => (EXAMPLE_PATH.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
  );
}

const keptFiles = KEPT_FOLDERS.flatMap(filesUnder);

test('no file of the mechanism or the tools names a path of the example or of test/fixtures/', () => {
  const named = examplePathsNamed(keptFiles);

  expect(named).toEqual([]);
});

test('the check reads every kind of file under the kept folders, comments and READMEs included', () => {
  expect(keptFiles).toEqual(
    expect.arrayContaining([
      'packages/tools/src/simulation/README.md',
      'packages/cdk/src/grants.ts',
      'packages/runtime/src/index.ts',
    ]),
  );
  expect(keptFiles.length).toBeGreaterThan(200);
});

test('the check finds an example path in a comment, and only under the example or test/fixtures/', () => {
  const line = (text: string) => EXAMPLE_PATH.test(text);

  expect(line(` * @example The stack (lib/${EXAMPLE}/stack.ts)`)).toBe(true);
  expect(line(`entry: 'lambdas/${EXAMPLE}/entry-points/create.ts'`)).toBe(true);
  expect(line(`(the plug-in: tooling/${EXAMPLE}/proof.ts)`)).toBe(true);
  expect(line('(test/fixtures/bookings/lib/stack.ts)')).toBe(true);
  expect(line('(test/exactly-once/fixtures/probe-stack.ts)')).toBe(false);
  expect(line(`(lambdas/${EXAMPLE}-extra/consumers.ts)`)).toBe(false);
  expect(line(`(lambdas/<example>/consumers.ts)`)).toBe(false);
});
