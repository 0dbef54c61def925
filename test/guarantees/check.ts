import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';
import type { CodeRef, DocRef, ExampleRegistry, Registry, TestRef } from './registry';
import { exampleReach } from '../support/example-reach';
import { headingAnchors } from '../support/markdown';

/**
 * Checks a guarantee registry against the repository: every file, symbol, test title and doc page it
 * names must exist, every guarantee must name a test, and ids must be unique. Returns one line per
 * problem (empty when the registry is true); reads files, changes nothing.
 *
 * The rules, chosen to be robust and honest rather than clever:
 * - A symbol is declared in a file when the file's syntax tree (TypeScript's parser, not a text search)
 *   has, at module top level, a `function`, `class`, `const`/`let`/`var` (destructured names too),
 *   `interface`, `type`, `enum` or `namespace` of that name, or `export { X }` / `export { Y as X }`;
 *   or when a top-level class or interface has a member (method, property, accessor) of that name.
 *   A name used, imported, mentioned in a comment or declared inside a function body does not count.
 * - A test is present when the file has a call `test(...)`, `it(...)` or `describe(...)` (also through
 *   `.each(...)`, `.only`, `.skip`, `.concurrent`, `.failing`) whose first argument is a string or
 *   template literal: a plain literal must equal the listed name exactly; a templated title (a
 *   template with substitutions, or an `.each` title with `%s` / `$name` placeholders) matches a ref
 *   marked `templated` when its name, at least 8 characters, is a substring of one of the title's
 *   literal parts. The same words in a comment, a plain string or a helper's argument do not count.
 *   A shared suite's test is looked up in the module that declares it, and each file listed in
 *   `runBy` must import that module.
 * - A doc page is a path under docs/ that exists; its anchor, when given, must be a heading's
 *   GitHub anchor (lower case, punctuation dropped, spaces to hyphens, repeats numbered).
 */
export function checkRegistry(registry: Registry, root: string): string[] {
  const problems: string[] = [];
  const files = new FileCache(root);

  const ids = [...registry.guarantees.map((g) => g.id), ...registry.nonGuarantees.map((n) => n.id)];
  for (const id of new Set(ids)) {
    const count = ids.filter((other) => other === id).length;
    if (count > 1) problems.push(`${id}: id used by ${count} entries`);
  }

  for (const guarantee of registry.guarantees) {
    const at = (message: string) => problems.push(`${guarantee.id}: ${message}`);
    if (guarantee.statement.trim() === '') at('has no statement');
    if (guarantee.enforcedIn.length === 0) at('names no code that enforces it');
    for (const ref of guarantee.enforcedIn) checkCode(ref, files).forEach(at);
    if (guarantee.provedBy.length === 0) at('lists no test');
    for (const ref of guarantee.provedBy) checkTest(ref, files).forEach(at);
    checkDoc(guarantee.doc, files).forEach(at);
  }

  for (const nonGuarantee of registry.nonGuarantees) {
    const at = (message: string) => problems.push(`${nonGuarantee.id}: ${message}`);
    if (nonGuarantee.statement.trim() === '') at('has no statement');
    for (const ref of nonGuarantee.shownBy ?? []) checkTest(ref, files).forEach(at);
    checkDoc(nonGuarantee.doc, files).forEach(at);
  }

  // A file named by two refs of one entry is missing once, not twice.
  return [...new Set(problems)];
}

/**
 * Checks both registries and the line between them: each as {@link checkRegistry} does; no id in both;
 * the mechanism's registry names no file that reaches the example (`reachesExample`, as the
 * another-domain test decides which tests survive deleting it), so every guarantee it lists is proved
 * with the example deleted; the example's extras (`alsoProvedBy`, `alsoEnforcedIn`) name ids of the
 * mechanism's registry, point at files that exist, and each test among them reaches the example (one
 * that does not belongs in the mechanism's registry). Without an example registry only the mechanism's
 * is checked.
 */
export function checkRegistries(
  mechanism: Registry,
  example: ExampleRegistry | undefined,
  root: string,
  reachesExample: (file: string) => boolean = exampleReach(root),
): string[] {
  const problems = checkRegistry(mechanism, root);
  const files = new FileCache(root);
  // A missing file is checkRegistry's to report; it reaches nothing.
  const reaches = (file: string) => files.read(file) !== undefined && reachesExample(file);
  const reaching = (file: string, runBy: readonly string[] = []) => [file, ...runBy].find(reaches);

  for (const entry of [...mechanism.guarantees, ...mechanism.nonGuarantees]) {
    const at = (message: string) => problems.push(`${entry.id}: ${message}`);
    const refs = 'provedBy' in entry ? entry.provedBy : (entry.shownBy ?? []);
    for (const ref of 'enforcedIn' in entry ? entry.enforcedIn : []) {
      if (reachesExample(ref.file))
        at(`enforced in ${ref.file}: it is the example's (alsoEnforcedIn of the example's registry)`);
    }
    for (const ref of refs) {
      const file = reaching(ref.file, ref.runBy);
      if (file !== undefined)
        at(`proved by ${ref.file}: ${file} reaches the example (cite it in the example's alsoProvedBy)`);
    }
  }
  if (example === undefined) return [...new Set(problems)];

  problems.push(...checkRegistry(example, root).map((problem) => `example's ${problem}`));
  const mechanismIds = new Set([...mechanism.guarantees, ...mechanism.nonGuarantees].map((entry) => entry.id));
  for (const entry of [...example.guarantees, ...example.nonGuarantees]) {
    if (mechanismIds.has(entry.id)) problems.push(`${entry.id}: id used by the mechanism's registry and the example's`);
  }
  for (const [id, refs] of Object.entries(example.alsoEnforcedIn ?? {})) {
    const at = (message: string) => problems.push(`${id} (the example's alsoEnforcedIn): ${message}`);
    if (!mechanismIds.has(id)) at("no guarantee or non-guarantee of the mechanism's registry has this id");
    for (const ref of refs) checkCode(ref, files).forEach(at);
  }
  for (const [id, refs] of Object.entries(example.alsoProvedBy)) {
    const at = (message: string) => problems.push(`${id} (the example's alsoProvedBy): ${message}`);
    if (!mechanismIds.has(id)) at("no guarantee or non-guarantee of the mechanism's registry has this id");
    for (const ref of refs) {
      checkTest(ref, files).forEach(at);
      if (files.read(ref.file) !== undefined && reaching(ref.file, ref.runBy) === undefined) {
        at(`proved by ${ref.file}: it reaches nothing of the example (cite it in the mechanism's registry)`);
      }
    }
  }
  return [...new Set(problems)];
}

function checkCode(ref: CodeRef, files: FileCache): string[] {
  const source = files.read(ref.file);
  if (source === undefined) return [`enforced in ${ref.file}: file does not exist`];
  if (!files.parsed(ref.file, 'symbols', declaredSymbols).has(ref.symbol)) {
    return [`enforced in ${ref.file}: no declaration of ${ref.symbol} in it`];
  }
  return [];
}

function checkTest(ref: TestRef, files: FileCache): string[] {
  const source = files.read(ref.file);
  if (source === undefined) return [`proved by ${ref.file}: file does not exist`];
  const problems: string[] = [];
  const titles = files.parsed(ref.file, 'titles', testTitles);
  if (!titles.some((title) => titleMatches(title, ref))) {
    problems.push(
      `proved by ${ref.file}: no test, it or describe titled "${ref.name}"${mismatchHint(titles, ref, source)}`,
    );
  }
  for (const runner of ref.runBy ?? []) {
    const runnerSource = files.read(runner);
    if (runnerSource === undefined) problems.push(`proved by ${ref.file} run by ${runner}: file does not exist`);
    else if (!importedFiles(runner, runnerSource).has(withoutExtension(ref.file))) {
      problems.push(`proved by ${ref.file} run by ${runner}: ${runner} does not import ${ref.file}`);
    }
  }
  return problems;
}

/** The repository-relative paths (without extension) a file imports from, by its relative specifiers. */
function importedFiles(fileName: string, source: string): Set<string> {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const imported = new Set<string>();
  for (const statement of file.statements) {
    if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier)) {
      const specifier = statement.moduleSpecifier.text;
      if (specifier.startsWith('.')) {
        imported.add(withoutExtension(path.posix.join(path.posix.dirname(fileName), specifier)));
      }
    }
  }
  return imported;
}

function withoutExtension(file: string): string {
  return file.replace(/\.(ts|js)$/, '');
}

function checkDoc(doc: DocRef, files: FileCache): string[] {
  if (!doc.page.startsWith('docs/')) return [`doc page ${doc.page} is not under docs/`];
  const markdown = files.read(doc.page);
  if (markdown === undefined) return [`doc page ${doc.page} does not exist`];
  if (doc.anchor !== undefined && !headingAnchors(markdown).has(doc.anchor)) {
    return [`doc page ${doc.page} has no heading #${doc.anchor}`];
  }
  return [];
}

class FileCache {
  private readonly cache = new Map<string, string | undefined>();
  constructor(private readonly root: string) {}

  /** The file's text, or undefined when it does not exist (or is not a file). */
  read(relative: string): string | undefined {
    if (!this.cache.has(relative)) {
      const absolute = path.join(this.root, relative);
      const exists = !path.isAbsolute(relative) && fs.existsSync(absolute) && fs.statSync(absolute).isFile();
      this.cache.set(relative, exists ? fs.readFileSync(absolute, 'utf8') : undefined);
    }
    return this.cache.get(relative);
  }

  private readonly derived = new Map<string, unknown>();

  /** What a reader derives from an existing file's text, worked out once per file (parsing is the cost). */
  parsed<T>(relative: string, kind: string, reader: (fileName: string, source: string) => T): T {
    const key = `${kind}:${relative}`;
    if (!this.derived.has(key)) this.derived.set(key, reader(relative, this.read(relative) ?? ''));
    return this.derived.get(key) as T;
  }
}

/** Names declared at a module's top level, and the members of its top-level classes and interfaces. */
export function declaredSymbols(fileName: string, source: string): Set<string> {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const names = new Set<string>();
  const addBinding = (name: ts.BindingName) => {
    if (ts.isIdentifier(name)) names.add(name.text);
    else for (const element of name.elements) if (!ts.isOmittedExpression(element)) addBinding(element.name);
  };
  const addMembers = (members: ts.NodeArray<ts.ClassElement | ts.TypeElement>) => {
    for (const member of members) {
      if (member.name !== undefined && (ts.isIdentifier(member.name) || ts.isPrivateIdentifier(member.name))) {
        names.add(member.name.text);
      }
    }
  };
  for (const statement of file.statements) {
    if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) addBinding(declaration.name);
    } else if (ts.isClassDeclaration(statement) || ts.isInterfaceDeclaration(statement)) {
      if (statement.name !== undefined) names.add(statement.name.text);
      addMembers(statement.members);
    } else if (
      ts.isFunctionDeclaration(statement) ||
      ts.isTypeAliasDeclaration(statement) ||
      ts.isEnumDeclaration(statement) ||
      ts.isModuleDeclaration(statement)
    ) {
      if (statement.name !== undefined && ts.isIdentifier(statement.name)) names.add(statement.name.text);
    } else if (
      ts.isExportDeclaration(statement) &&
      statement.exportClause &&
      ts.isNamedExports(statement.exportClause)
    ) {
      for (const specifier of statement.exportClause.elements) names.add(specifier.name.text);
    }
  }
  return names;
}

/** A test title as written: its literal text, or the literal parts of a templated one. */
export type Title = { kind: 'literal'; text: string } | { kind: 'templated'; parts: string[] };

const TEST_FUNCTIONS = new Set(['test', 'it', 'describe']);

/** The titles of every test(), it() and describe() call in a file, read from its syntax tree. */
export function testTitles(fileName: string, source: string): Title[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const titles: Title[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) && node.arguments.length > 0) {
      const callee = testCallee(node.expression);
      if (callee !== undefined) {
        const title = titleOf(node.arguments[0], callee.each);
        if (title !== undefined) titles.push(title);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return titles;
}

/** `test`, `it`, `describe`, or one of them through `.only` / `.skip` / ... / `.each(table)`. */
function testCallee(expression: ts.Expression): { each: boolean } | undefined {
  let each = false;
  let current: ts.Expression = expression;
  if (ts.isCallExpression(current)) {
    // test.each(table)('title', fn): the title belongs to the outer call.
    if (!ts.isPropertyAccessExpression(current.expression) || current.expression.name.text !== 'each') return undefined;
    each = true;
    current = current.expression.expression;
  }
  while (ts.isPropertyAccessExpression(current)) current = current.expression;
  return ts.isIdentifier(current) && TEST_FUNCTIONS.has(current.text) ? { each } : undefined;
}

function titleOf(argument: ts.Expression, each: boolean): Title | undefined {
  if (ts.isStringLiteral(argument) || ts.isNoSubstitutionTemplateLiteral(argument)) {
    return each && /%[sdifjoOp#%]|\$\w/.test(argument.text)
      ? { kind: 'templated', parts: argument.text.split(/%[sdifjoOp#%]|\$[\w.]+/) }
      : { kind: 'literal', text: argument.text };
  }
  if (ts.isTemplateExpression(argument)) {
    return { kind: 'templated', parts: [argument.head.text, ...argument.templateSpans.map((s) => s.literal.text)] };
  }
  return undefined;
}

/** Shortest literal part a templated title may be named by: shorter ones are not distinctive. */
export const MIN_TEMPLATED_SUBSTRING = 8;

/** A plain title is named whole; a templated one, when the ref says so, by a literal part of it. */
export function titleMatches(title: Title, ref: TestRef): boolean {
  if (title.kind === 'literal') return ref.templated !== true && title.text === ref.name;
  return (
    ref.templated === true &&
    ref.name.length >= MIN_TEMPLATED_SUBSTRING &&
    title.parts.some((part) => part.includes(ref.name))
  );
}

/** Why a name that is in the file still names no test, when the file tells. */
function mismatchHint(titles: Title[], ref: TestRef, source: string): string {
  const asTemplated: TestRef = { ...ref, templated: true };
  const asPlain: TestRef = { file: ref.file, name: ref.name };
  if (ref.templated !== true && titles.some((title) => titleMatches(title, asTemplated))) {
    return ' (it is part of a templated title: mark it templated)';
  }
  if (ref.templated === true && titles.some((title) => titleMatches(title, asPlain))) {
    return ' (it is a plain title: it is not templated)';
  }
  if (titles.some((title) => title.kind === 'literal' && title.text.includes(ref.name))) {
    return ' (a longer title contains it: name a plain title whole)';
  }
  return source.includes(ref.name) ? ' (the text is in the file, but not as a test title)' : '';
}
