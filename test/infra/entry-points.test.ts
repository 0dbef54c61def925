import { App, Stack } from 'aws-cdk-lib';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';
import { readConfig } from '../../lib/shop/config';
import { FunctionWithDefaults, PROJECT_DIR } from '../../lib/exactly-once/function-defaults';
import { ExactlyOnceStack } from '../../lib/shop/shop-stack';
import { cdkContext } from '../support/synth';

/**
 * Every function names its code by a module path (relative to the project root); the consumer
 * list names its consumers' modules the same way. These checks keep the entry folders and the
 * stack in step: no entry module that no function of the dev or prod stack runs, no function
 * whose module is missing or has no `handler`.
 */

/** The folders whose every module is a Lambda entry (a handler's first module). */
const ENTRY_FOLDERS = ['lambdas/shop/entry-points'];

/** Whether a module exports a value named `handler` (read from its source: importing it would run its start-up code). */
function exportsHandler(file: string): boolean {
  if (!fs.existsSync(file)) return false;
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022);
  return source.statements.some((statement) => {
    if (ts.isExportDeclaration(statement)) {
      const clause = statement.exportClause;
      return (
        !statement.isTypeOnly &&
        clause !== undefined &&
        ts.isNamedExports(clause) &&
        clause.elements.some((e) => !e.isTypeOnly && e.name.text === 'handler')
      );
    }
    const exported = ts.canHaveModifiers(statement)
      ? (ts.getModifiers(statement) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
      : false;
    if (!exported) return false;
    if (ts.isFunctionDeclaration(statement)) return statement.name?.text === 'handler';
    if (ts.isVariableStatement(statement)) {
      return statement.declarationList.declarations.some((d) => ts.isIdentifier(d.name) && d.name.text === 'handler');
    }
    return false;
  });
}

/** The entries the functions of a stage's stack run, built as bin/app.ts builds it (without bundling). */
function entriesOfStage(context: Record<string, unknown>): Set<string> {
  const app = new App({ context: cdkContext(context) });
  const config = readConfig(app);
  const stack = new ExactlyOnceStack(app, config.stackName, { config });
  return new Set(
    stack.node
      .findAll()
      .filter((c): c is FunctionWithDefaults => c instanceof FunctionWithDefaults)
      .map((fn) => path.normalize(fn.entry)),
  );
}

const entryModules = (): string[] =>
  ENTRY_FOLDERS.flatMap((folder) =>
    fs
      .readdirSync(path.join(PROJECT_DIR, folder))
      .filter((file) => file.endsWith('.ts'))
      .map((file) => path.join(folder, file)),
  );

test.each([
  ['dev', {}],
  ['prod', { stage: 'prod' }],
])('every module of the entry folders is the code of a function of the %s stack', (_, context) => {
  const used = entriesOfStage(context);

  expect(entryModules().filter((file) => !used.has(file))).toEqual([]);
});

test("every function's entry exists and exports handler", () => {
  const entries = [...entriesOfStage({})];

  const withoutHandler = entries.filter((entry) => !exportsHandler(path.join(PROJECT_DIR, entry)));

  expect(entries.length).toBeGreaterThan(0);
  expect(withoutHandler).toEqual([]);
});

test('a function whose entry is missing fails at synth with a one-line error', () => {
  const stack = new Stack(new App({ context: cdkContext() }), 'Probe');

  const create = () => new FunctionWithDefaults(stack, 'Fn', { entry: 'lambdas/shop/entry-points/moved-away.ts' });

  expect(create).toThrow(
    /^Entry lambdas\/shop\/entry-points\/moved-away\.ts does not exist \(a path relative to the project root\)$/,
  );
});
