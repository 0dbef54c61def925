import * as fs from 'node:fs';
import * as ts from 'typescript';

/** Whether a module exports a value named `handler` (read from its source: importing it would run its start-up code). */
export function exportsHandler(file: string): boolean {
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
