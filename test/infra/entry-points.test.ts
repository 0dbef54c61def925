import { App, Stack } from 'aws-cdk-lib';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';
import { ENTRY_POINTS, type EntryPoint } from '../../lambdas/entry-points';
import { readConfig } from '../../lib/shop/config';
import { ENTRY_POINTS_DIR, HouseFunction } from '../../lib/exactly-once/function-defaults';
import { ExactlyOnceStack } from '../../lib/shop/shop-stack';
import { cdkContext } from '../support/synth';

/**
 * lambdas/entry-points/index.ts lists the Lambda entry points, and functions
 * name their code by that list. These checks keep the list, the folder and the
 * stack in step: no entry module nobody lists, no listed module that is missing
 * or has no `handler`, no listed entry point that no function deploys.
 */

const LISTED = Object.keys(ENTRY_POINTS) as EntryPoint[];
const INDEX = 'index.ts';

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

/** The entry points the functions of a stage's stack run, built as bin/app.ts builds it (without bundling). */
function entryPointsOfStage(context: Record<string, unknown>): Set<EntryPoint> {
  const app = new App({ context: cdkContext(context) });
  const config = readConfig(app);
  const stack = new ExactlyOnceStack(app, config.stackName, { config });
  return new Set(
    stack.node
      .findAll()
      .filter((c): c is HouseFunction => c instanceof HouseFunction)
      .map((fn) => fn.entryPoint),
  );
}

test('every file of lambdas/entry-points is a listed entry point', () => {
  const listedFiles = new Set<string>(Object.values(ENTRY_POINTS));

  const unlisted = fs.readdirSync(ENTRY_POINTS_DIR).filter((file) => file !== INDEX && !listedFiles.has(file));

  expect(unlisted).toEqual([]);
});

test('every listed entry point has its file', () => {
  const missing = LISTED.filter((name) => !fs.existsSync(path.join(ENTRY_POINTS_DIR, ENTRY_POINTS[name])));

  expect(missing).toEqual([]);
});

test('every listed entry point exports handler', () => {
  const withoutHandler = LISTED.filter((name) => !exportsHandler(path.join(ENTRY_POINTS_DIR, ENTRY_POINTS[name])));

  expect(withoutHandler).toEqual([]);
});

test.each([
  ['dev', {}],
  ['prod', { stage: 'prod' }],
])('every listed entry point is the code of a function of the %s stack', (_, context) => {
  const used = entryPointsOfStage(context);

  expect(LISTED.filter((name) => !used.has(name))).toEqual([]);
});

describe('a function whose entry point cannot be resolved fails at synth with a one-line error', () => {
  const stackForProbe = () => new Stack(new App({ context: cdkContext() }), 'Probe');

  afterEach(() => jest.restoreAllMocks());

  test('a listed entry point whose file is missing', () => {
    jest.replaceProperty(ENTRY_POINTS as Record<EntryPoint, string>, 'get-order', 'moved-away.ts');
    const stack = stackForProbe();

    const create = () => new HouseFunction(stack, 'Fn', { entryPoint: 'get-order' });

    expect(create).toThrow(/^Entry point get-order: lambdas\/entry-points\/moved-away\.ts does not exist$/);
  });

  test('a name the list does not have (a typo is a type error first)', () => {
    const stack = stackForProbe();

    // @ts-expect-error a misspelt entry point does not typecheck; if this line compiles, typecheck fails here
    const create = () => new HouseFunction(stack, 'Fn', { entryPoint: 'create-ordr' });

    expect(create).toThrow(/^Entry point create-ordr is not listed in lambdas\/entry-points\/index\.ts$/);
  });
});
