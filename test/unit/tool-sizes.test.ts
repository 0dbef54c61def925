import { execFileSync } from 'node:child_process';
import * as path from 'node:path';

/**
 * The lint config keeps the tools (packages/tools/src) in parts a reader can hold: no file over 500
 * lines and no function over 100, comments and blank lines counted, so a job that grows gets a module of
 * its own. Each case lints a made-up text as if it were the named file (it need not exist), in one
 * ESLint process (jest cannot load the ESM config itself).
 */
const ROOT = path.join(__dirname, '..', '..');
const SIZE_RULES = ['max-lines', 'max-lines-per-function'];

const LINT_CASES = `
import { ESLint } from 'eslint';
const cases = JSON.parse(process.argv[1]);
const eslint = new ESLint({ cwd: process.cwd() });
const out = [];
for (const [filePath, code] of cases) {
  const [result] = await eslint.lintText(code, { filePath });
  out.push(result.messages.map((m) => m.ruleId));
}
console.log(JSON.stringify(out));
`;

/** A module of `lines` lines: one exported constant per line. */
const moduleOf = (lines: number) =>
  Array.from({ length: lines }, (_, i) => `export const value${i} = ${i};`).join('\n') + '\n';

/** A module whose one function spans `lines` lines, its signature and closing brace included. */
const functionOf = (lines: number) =>
  [
    'export function long(): number {',
    '  let total = 0;',
    ...Array.from({ length: lines - 4 }, (_, i) => `  total += ${i};`),
    '  return total;',
    '}',
  ].join('\n') + '\n';

function sizeFindings(cases: [file: string, text: string][]): string[][] {
  const input = cases.map(([file, text]) => [path.join(ROOT, file), text]);
  const output = execFileSync(process.execPath, ['--input-type=module', '-e', LINT_CASES, JSON.stringify(input)], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return (JSON.parse(output) as (string | null)[][]).map((rules) =>
    rules.filter((rule): rule is string => rule !== null && SIZE_RULES.includes(rule)),
  );
}

test('in the tools a file over 500 lines and a function over 100 lines fail lint; at the limits, and outside the tools, they pass', () => {
  // Arrange
  const cases: [string, string][] = [
    ['packages/tools/src/probe/long-file.ts', moduleOf(501)],
    ['packages/tools/src/probe/file-at-limit.ts', moduleOf(500)],
    ['packages/tools/src/probe/long-function.ts', functionOf(101)],
    ['packages/tools/src/probe/function-at-limit.ts', functionOf(100)],
    ['lib/probe-long-file.ts', moduleOf(501)],
  ];

  // Act
  const findings = sizeFindings(cases);

  // Assert
  expect(findings).toEqual([['max-lines'], [], ['max-lines-per-function'], [], []]);
});
