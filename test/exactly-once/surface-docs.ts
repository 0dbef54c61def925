import * as path from 'node:path';
import ts from 'typescript';

/** The nodes a doc comment of `declaration` sits on: a `const`'s statement, a re-export's `export { ... }` statement. */
function documentedNode(declaration: ts.Declaration): ts.Node {
  if (ts.isVariableDeclaration(declaration)) return declaration.parent.parent;
  if (ts.isExportSpecifier(declaration)) return declaration.parent.parent;
  return declaration;
}

/**
 * Reads public surfaces (index modules, relative to `root`) with the TypeScript checker: the names each
 * exports, and those with no doc comment carrying an `@example`, on their declaration or on a re-export
 * of it. The mechanism's surfaces (public-surface.test.ts) and the tools' (test/unit/tools-surface.test.ts).
 */
export function surfaceReader<S extends string>(root: string, surfaces: Record<S, string>) {
  const files = Object.values<string>(surfaces).map((file) => path.join(root, file));
  const program = ts.createProgram(files, { noEmit: true, skipLibCheck: true, esModuleInterop: true });
  const checker = program.getTypeChecker();

  const exportsOf = (surface: S): ts.Symbol[] => {
    const source = program.getSourceFile(path.join(root, surfaces[surface]))!;
    return checker.getExportsOfModule(checker.getSymbolAtLocation(source)!);
  };

  const undocumented = (surface: S): string[] =>
    exportsOf(surface).flatMap((exported) => {
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

  return { checker, exportsOf, undocumented };
}
