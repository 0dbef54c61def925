import * as path from 'node:path';
import ts from 'typescript';
import { surfaceReader } from './surface-docs';

/**
 * The mechanism's public surface stays narrow and documented: the root modules export what an
 * application writes against (at most 30 names at `@exactly-once/runtime`, 20 at `@exactly-once/cdk`), the
 * rest is in subpath modules, and every name any of them exports has a doc comment with an `@example`.
 */
const ROOT = path.join(__dirname, '..', '..');
const SURFACES = {
  '@exactly-once/runtime': 'packages/runtime/src/index.ts',
  '@exactly-once/runtime/aws': 'packages/runtime/src/aws/index.ts',
  '@exactly-once/runtime/api': 'packages/runtime/src/api/index.ts',
  '@exactly-once/runtime/runtime': 'packages/runtime/src/runtime/index.ts',
  '@exactly-once/runtime/testing': 'packages/runtime/src/testing/index.ts',
  '@exactly-once/cdk': 'packages/cdk/src/index.ts',
  '@exactly-once/cdk/parts': 'packages/cdk/src/parts/index.ts',
};
const { checker, exportsOf, undocumented } = surfaceReader(ROOT, SURFACES);
type Surface = keyof typeof SURFACES;

test('the runtime root exports at most 30 names, the CDK root at most 20', () => {
  expect(exportsOf('@exactly-once/runtime').length).toBeLessThanOrEqual(30);
  expect(exportsOf('@exactly-once/cdk').length).toBeLessThanOrEqual(20);
});

test.each(Object.keys(SURFACES) as Surface[])('every name %s exports has a doc comment with an @example', (surface) => {
  expect(undocumented(surface)).toEqual([]);
});

/** What a test hook was called: the simulation's ledger swap, the local runtime's inbox switch. */
const TEST_HOOK = /ledgerFor|bypass|disableInbox/i;

/** The members (public, protected and private) of every type or class a surface exports, named like a test hook. */
function hooksIn(surface: Surface): string[] {
  return exportsOf(surface).flatMap((exported) => {
    const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    if (!(symbol.flags & (ts.SymbolFlags.Type | ts.SymbolFlags.Class))) return [];
    const members = checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(symbol)).map((m) => m.name);
    return members.filter((name) => TEST_HOOK.test(name)).map((name) => `${surface}: ${exported.name}.${name}`);
  });
}

// The simulation's guard switches and the local runtime's broken build act below the ledger, on the
// DynamoDB calls it sends: an application's wiring, ledgers and options carry no test hook to write or see.
// (The CDK surfaces are left out: there `FunctionBuild.inboxBypass` chooses which bundle is built.)
const RUNTIME_SURFACES = (Object.keys(SURFACES) as Surface[]).filter((s) => s.startsWith('@exactly-once/runtime'));
test.each(RUNTIME_SURFACES)('no type or class %s exports carries a test hook', (surface) => {
  expect(hooksIn(surface)).toEqual([]);
});
