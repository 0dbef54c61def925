import * as path from 'node:path';
import { lintTexts } from '../support/lint-texts';

/**
 * The lint config keeps the tools (packages/tools/src) in parts a reader can hold: no file over 500
 * lines and no function over 100, comments and blank lines counted, so a job that grows gets a module of
 * its own. Each case lints a made-up text as if it were the named file (test/support/lint-texts.ts).
 */
const ROOT = path.join(__dirname, '..', '..');
const SIZE_RULES = ['max-lines', 'max-lines-per-function'];

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
  return lintTexts(ROOT, cases).map((findings) =>
    findings.flatMap(({ ruleId }) => (ruleId !== null && SIZE_RULES.includes(ruleId) ? [ruleId] : [])),
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
