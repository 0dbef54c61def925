import * as path from 'node:path';
import ts from 'typescript';

/**
 * Every prop of every props or options interface the mechanism's constructs export
 * (packages/cdk/src/index.ts and the parts module, packages/cdk/src/parts/index.ts) is written as AWS Solutions Constructs write theirs: `readonly`, with a
 * doc comment, and an optional one says its default (`@default`). A prop added without them fails here.
 */
const INDEXES = [
  path.join(__dirname, '..', '..', 'packages', 'cdk', 'src', 'index.ts'),
  path.join(__dirname, '..', '..', 'packages', 'cdk', 'src', 'parts', 'index.ts'),
];

function undocumentedProps(): string[] {
  const program = ts.createProgram(INDEXES, { noEmit: true, skipLibCheck: true });
  const checker = program.getTypeChecker();
  const problems: string[] = [];
  const exports = INDEXES.flatMap((file) =>
    checker.getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(file)!)!),
  );
  for (const exported of exports) {
    if (!/(Props|Options)$/.test(exported.name)) continue;
    const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    for (const declaration of symbol.declarations ?? []) {
      if (!ts.isInterfaceDeclaration(declaration)) continue;
      for (const member of declaration.members) {
        if (!ts.isPropertySignature(member)) continue;
        const where = `${exported.name}.${member.name.getText()}`;
        const docs = ts.getJSDocCommentsAndTags(member);
        const tags = ts.getJSDocTags(member).map((t) => t.tagName.text);
        if (!member.modifiers?.some((m) => m.kind === ts.SyntaxKind.ReadonlyKeyword))
          problems.push(`${where}: not readonly`);
        if (docs.length === 0) problems.push(`${where}: no doc comment`);
        if (member.questionToken !== undefined && !tags.includes('default'))
          problems.push(`${where}: optional without @default`);
      }
    }
  }
  return problems;
}

test('every prop of the exported construct props is readonly and documented, and an optional one states its default', () => {
  expect(undocumentedProps()).toEqual([]);
});
