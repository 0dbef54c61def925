import { execFileSync } from 'node:child_process';
import * as path from 'node:path';

const LINT_CASES = `
import { ESLint } from 'eslint';
const cases = JSON.parse(process.argv[1]);
const eslint = new ESLint({ cwd: process.cwd() });
const out = [];
for (const [filePath, code] of cases) {
  const [result] = await eslint.lintText(code, { filePath });
  out.push(result.messages.map((m) => ({ ruleId: m.ruleId, message: m.message })));
}
console.log(JSON.stringify(out));
`;

/** One lint finding: the rule that fired (null for a parse error) and what it says. */
export interface LintFinding {
  ruleId: string | null;
  message: string;
}

/**
 * Lints each text as if it were the named file (relative to `root`; the file need not exist) with the
 * repository's ESLint config, all in one ESLint process (jest cannot load the ESM config itself): the
 * findings of each case, in order.
 */
export function lintTexts(root: string, cases: readonly (readonly [file: string, text: string])[]): LintFinding[][] {
  const input = cases.map(([file, text]) => [path.join(root, file), text]);
  const output = execFileSync(process.execPath, ['--input-type=module', '-e', LINT_CASES, JSON.stringify(input)], {
    cwd: root,
    encoding: 'utf8',
  });
  return JSON.parse(output) as LintFinding[][];
}
