import * as path from 'node:path';
import ts from 'typescript';

/**
 * The mechanism's public surface stays narrow and documented: the root modules export what an
 * application writes against (at most 30 names at `@exactly-once/runtime`, 20 at `@exactly-once/cdk`, 12 at
 * `@exactly-once/tools`, what its plug-ins for the tools write against), the
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
  '@exactly-once/tools': 'packages/tools/src/index.ts',
  '@exactly-once/cdk/parts': 'packages/cdk/src/parts/index.ts',
};
const files = Object.values(SURFACES).map((file) => path.join(ROOT, file));
const program = ts.createProgram(files, { noEmit: true, skipLibCheck: true, esModuleInterop: true });
const checker = program.getTypeChecker();

function exportsOf(surface: keyof typeof SURFACES): ts.Symbol[] {
  const source = program.getSourceFile(path.join(ROOT, SURFACES[surface]))!;
  return checker.getExportsOfModule(checker.getSymbolAtLocation(source)!);
}

/** The nodes a doc comment of `declaration` sits on: a `const`'s statement, a re-export's `export { ... }` statement. */
function documentedNode(declaration: ts.Declaration): ts.Node {
  if (ts.isVariableDeclaration(declaration)) return declaration.parent.parent;
  if (ts.isExportSpecifier(declaration)) return declaration.parent.parent;
  return declaration;
}

/** The exported names with no doc comment carrying an `@example`, on their declaration or on a re-export of it. */
function undocumented(surface: keyof typeof SURFACES): string[] {
  return exportsOf(surface).flatMap((exported) => {
    const chain: ts.Symbol[] = [];
    for (let symbol: ts.Symbol | undefined = exported; symbol !== undefined && !chain.includes(symbol);) {
      chain.push(symbol);
      symbol = symbol.flags & ts.SymbolFlags.Alias ? checker.getImmediateAliasedSymbol(symbol) : undefined;
    }
    const documented = chain
      .flatMap((symbol) => symbol.declarations ?? [])
      .some((declaration) => {
        const node = documentedNode(declaration);
        const tags = ts.getJSDocTags(node).map((tag) => tag.tagName.text);
        return ts.getJSDocCommentsAndTags(node).length > 0 && tags.includes('example');
      });
    return documented ? [] : [`${surface}: ${exported.name}`];
  });
}

test('the runtime root exports at most 30 names, the CDK root at most 20, the tools root at most 12', () => {
  expect(exportsOf('@exactly-once/runtime').length).toBeLessThanOrEqual(30);
  expect(exportsOf('@exactly-once/cdk').length).toBeLessThanOrEqual(20);
  expect(exportsOf('@exactly-once/tools').length).toBeLessThanOrEqual(12);
});

test.each(Object.keys(SURFACES) as (keyof typeof SURFACES)[])(
  'every name %s exports has a doc comment with an @example',
  (surface) => {
    expect(undocumented(surface)).toEqual([]);
  },
);

/** What a test hook was called: the simulation's ledger swap, the local runtime's inbox switch. */
const TEST_HOOK = /ledgerFor|bypass|disableInbox/i;

/** The members (public, protected and private) of every type or class a surface exports, named like a test hook. */
function hooksIn(surface: keyof typeof SURFACES): string[] {
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
const RUNTIME_SURFACES = (Object.keys(SURFACES) as (keyof typeof SURFACES)[]).filter((s) =>
  s.startsWith('@exactly-once/runtime'),
);
test.each(RUNTIME_SURFACES)('no type or class %s exports carries a test hook', (surface) => {
  expect(hooksIn(surface)).toEqual([]);
});
