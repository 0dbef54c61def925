import * as fs from 'node:fs';
import * as path from 'node:path';
import { exampleRegistryFile, loadExampleRegistry } from './example';
import {
  REGISTRY,
  type CodeRef,
  type DocRef,
  type ExampleRegistry,
  type Guarantee,
  type NonGuarantee,
  type Registry,
  type TestRef,
} from './registry';

/**
 * Writes the generated sections of the two guarantee pages: the mechanism's, from its registry, beside
 * its packages (packages/GUARANTEES.md), and the example's, from the example's registry
 * (docs/guarantees.md): `npx tsx test/guarantees/render.ts`. Two files, so an upstream change to the
 * mechanism's never conflicts in a fork that replaced the example's page, and the reverse. The prose
 * around the markers is kept as it is.
 *
 * The tables are written without padding and inside a prettier-ignore range: prettier would pad
 * every row to the widest cell (the page was once 41 KB of spaces).
 */
export const MECHANISM_PAGE = 'packages/GUARANTEES.md';
export const EXAMPLE_PAGE = 'docs/guarantees.md';
export const BEGIN = '<!-- guarantees:begin -->';
export const END = '<!-- guarantees:end -->';
export const RENDER_COMMAND = 'npx tsx test/guarantees/render.ts';

const ROOT = path.join(__dirname, '..', '..');

/**
 * The mechanism's section (markers excluded), rendered from its registry alone: its guarantees and its
 * limits, with links relative to MECHANISM_PAGE. A drifted test file is the checker's to report, not a
 * reason for the page to change. A part of a templated title is shown with ellipses.
 */
export function renderMechanismSection(mechanism: Registry): string {
  const links = new Links(MECHANISM_PAGE);
  return section([
    `<!-- Generated from test/guarantees/registry.ts by \`${RENDER_COMMAND}\`: edit the registry, not this section. -->`,
    '<!-- prettier-ignore-start -->',
    '',
    `**The mechanism's guarantees** (${mechanism.guarantees.length}), from test/guarantees/registry.ts: every test listed reaches nothing of the example, so each guarantee is proved with the example deleted.`,
    '',
    ...guaranteeTable(mechanism.guarantees, links),
    '',
    '**What the mechanism does not guarantee**',
    '',
    ...nonGuaranteeTable(mechanism.nonGuarantees, links),
    '',
    '<!-- prettier-ignore-end -->',
  ]);
}

/**
 * The example's section (markers excluded): its guarantees and limits (from `exampleFile`, or a line
 * saying it has none), then the proofs it adds to the mechanism's guarantees, with links relative to
 * EXAMPLE_PAGE.
 */
export function renderExampleSection(
  example: ExampleRegistry | undefined,
  exampleFile: string,
  mechanism: Registry,
): string {
  const links = new Links(EXAMPLE_PAGE);
  return section([
    `<!-- Generated from ${exampleFile} and test/guarantees/registry.ts by \`${RENDER_COMMAND}\`: edit the registries, not this section. -->`,
    '<!-- prettier-ignore-start -->',
    '',
    ...(example === undefined
      ? [`**The example's guarantees**: the example has no registry (${exampleFile}), so it lists none.`]
      : exampleSection(example, exampleFile, mechanism, links)),
    '',
    '<!-- prettier-ignore-end -->',
  ]);
}

const section = (lines: string[]) => `\n${lines.join('\n')}\n`;

function exampleSection(example: ExampleRegistry, exampleFile: string, mechanism: Registry, links: Links): string[] {
  const statementOf = new Map(
    [...mechanism.guarantees, ...mechanism.nonGuarantees].map((entry) => [entry.id, entry.statement]),
  );
  const extraIds = [...new Set([...Object.keys(example.alsoEnforcedIn ?? {}), ...Object.keys(example.alsoProvedBy)])];
  const order = (id: string) => {
    const index = [...statementOf.keys()].indexOf(id);
    return index < 0 ? Number.MAX_SAFE_INTEGER : index;
  };
  const proofs = Object.values(example.alsoProvedBy).reduce((count, refs) => count + refs.length, 0);
  const places = Object.values(example.alsoEnforcedIn ?? {}).reduce((count, refs) => count + refs.length, 0);
  return [
    `**The example's guarantees** (${example.guarantees.length}), from ${exampleFile}: the rules of its own domain, proved by its own tests.`,
    '',
    ...guaranteeTable(example.guarantees, links),
    '',
    '**What the example does not guarantee**',
    '',
    ...nonGuaranteeTable(example.nonGuarantees, links),
    '',
    `**The mechanism's guarantees, proved again through the example** (${proofs} tests and ${places} places in its code, for ${extraIds.length} entries), from ${exampleFile}: where the example applies them and its tests that prove them on its domain.`,
    '',
    '| Guarantee or limit of the mechanism | Applied in the example | Also proved by |',
    '| --- | --- | --- |',
    ...extraIds
      .sort((a, b) => order(a) - order(b))
      .map((id) =>
        row([
          `${cell(statementOf.get(id) ?? "(not in the mechanism's registry)")} (\`${id}\`)`,
          links.code(example.alsoEnforcedIn?.[id] ?? []) || '—',
          links.tests(example.alsoProvedBy[id] ?? []) || '—',
        ]),
      ),
  ];
}

function guaranteeTable(guarantees: readonly Guarantee[], links: Links): string[] {
  return [
    '| Guarantee | Enforced in | Proved by | Explained in |',
    '| --- | --- | --- | --- |',
    ...guarantees.map((g) =>
      row([`${cell(g.statement)} (\`${g.id}\`)`, links.code(g.enforcedIn), links.tests(g.provedBy), links.doc(g.doc)]),
    ),
  ];
}

function nonGuaranteeTable(nonGuarantees: readonly NonGuarantee[], links: Links): string[] {
  return [
    '| Not guaranteed | Explained in | Where a test shows the limit |',
    '| --- | --- | --- |',
    ...nonGuarantees.map((n) =>
      row([`${cell(n.statement)} (\`${n.id}\`)`, links.doc(n.doc), n.shownBy ? links.tests(n.shownBy) : '—']),
    ),
  ];
}

/** The page with its section replaced; the markers must be there, once each and in order. */
export function withSection(page: string, section: string): string {
  const { before, after } = split(page);
  return `${before}${BEGIN}${section}${END}${after}`;
}

/** The section as the page has it now. */
export function currentSection(page: string): string {
  const { section } = split(page);
  return section;
}

function split(page: string): { before: string; section: string; after: string } {
  const begin = page.indexOf(BEGIN);
  const end = page.indexOf(END);
  if (begin < 0 || end < begin || page.indexOf(BEGIN, begin + 1) >= 0 || page.indexOf(END, end + 1) >= 0) {
    throw new Error(`a guarantee page must hold ${BEGIN} and then ${END}, once each`);
  }
  return {
    before: page.slice(0, begin),
    section: page.slice(begin + BEGIN.length, end),
    after: page.slice(end + END.length),
  };
}

function row(cells: string[]): string {
  return `| ${cells.join(' | ')} |`;
}

/** Authored markdown in a cell: only a pipe would break the row. */
function cell(markdown: string): string {
  return markdown.replace(/\|/g, '\\|');
}

/** Literal text (a test title) in a cell: nothing in it is markup. */
function literal(text: string): string {
  return text
    .replace(/[\\`*_[\]|]/g, (c) => `\\${c}`)
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');
}

/** Links from one page (`page`, a path from the repository root) to the files and pages it cites. */
class Links {
  private readonly dir: string;

  constructor(page: string) {
    this.dir = path.posix.dirname(page);
  }

  /** A link to a file; its text drops the top folder (test/, packages/, lambdas/) when two more remain. */
  file(file: string): string {
    const parts = file.split('/');
    const text = parts.length > 2 ? parts.slice(1).join('/') : file;
    return `[${text}](${path.posix.relative(this.dir, file)})`;
  }

  code(refs: readonly CodeRef[]): string {
    return [...byFile(refs)]
      .map(([file, symbols]) => `${this.file(file)}: ${symbols.map((s) => `\`${s.symbol}\``).join(', ')}`)
      .join('<br>');
  }

  tests(refs: readonly TestRef[]): string {
    return [...byFile(refs)]
      .map(([file, tests]) => {
        const runBy = [...new Set(tests.flatMap((t) => t.runBy ?? []))];
        const runners = runBy.length > 0 ? ` (run by ${runBy.map((f) => this.file(f)).join(', ')})` : '';
        const title = (t: TestRef) => (t.templated ? `"…${literal(t.name.trim())}…"` : `"${literal(t.name)}"`);
        return `${this.file(file)}${runners}: ${tests.map(title).join('; ')}`;
      })
      .join('<br>');
  }

  /** A link to a doc page: the page's name as text, the anchor in the link. */
  doc(doc: DocRef): string {
    const page = path.posix.relative(this.dir, doc.page);
    return `[${page}](${page}${doc.anchor ? `#${doc.anchor}` : ''})`;
  }
}

function byFile<T extends { file: string }>(refs: readonly T[]): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const ref of refs) groups.set(ref.file, [...(groups.get(ref.file) ?? []), ref]);
  return groups;
}

if (require.main === module) {
  const pages: [string, string][] = [
    [MECHANISM_PAGE, renderMechanismSection(REGISTRY)],
    [EXAMPLE_PAGE, renderExampleSection(loadExampleRegistry(ROOT), exampleRegistryFile(ROOT), REGISTRY)],
  ];
  for (const [page, rendered] of pages) {
    const file = path.join(ROOT, page);
    const before = fs.readFileSync(file, 'utf8');
    const after = withSection(before, rendered);
    fs.writeFileSync(file, after);
    console.log(`${page}: ${after === before ? 'already up to date' : 'rewritten'} (${after.length} characters)`);
  }
}
