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
 * Writes the generated section of docs/guarantees.md from the mechanism's registry and the example's:
 * `npx tsx test/guarantees/render.ts`. The prose around the markers is kept as it is.
 *
 * The tables are written without padding and inside a prettier-ignore range: prettier would pad
 * every row to the widest cell (the page was once 41 KB of spaces).
 */
export const PAGE = 'docs/guarantees.md';
export const BEGIN = '<!-- guarantees:begin -->';
export const END = '<!-- guarantees:end -->';
export const RENDER_COMMAND = 'npx tsx test/guarantees/render.ts';

const ROOT = path.join(__dirname, '..', '..');
const PAGE_DIR = path.posix.dirname(PAGE);

/**
 * The section between the markers (markers excluded), rendered from the registries alone: a drifted
 * test file is the checker's to report, not a reason for the page to change. The mechanism's
 * guarantees and limits first; then the example's (from `exampleFile`, or a line saying it has none);
 * then the proofs the example adds to the mechanism's guarantees. A part of a templated title is shown
 * with ellipses.
 */
export function renderSection(mechanism: Registry, example: ExampleRegistry | undefined, exampleFile: string): string {
  const lines = [
    `<!-- Generated from test/guarantees/registry.ts and ${exampleFile} by \`${RENDER_COMMAND}\`: edit the registries, not this section. -->`,
    '<!-- prettier-ignore-start -->',
    '',
    `**The mechanism's guarantees** (${mechanism.guarantees.length}), from test/guarantees/registry.ts: every test listed reaches nothing of the example, so each guarantee is proved with the example deleted.`,
    '',
    ...guaranteeTable(mechanism.guarantees),
    '',
    '**What the mechanism does not guarantee**',
    '',
    ...nonGuaranteeTable(mechanism.nonGuarantees),
    '',
    ...(example === undefined
      ? [`**The example's guarantees**: the example has no registry (${exampleFile}), so it lists none.`]
      : exampleSection(example, exampleFile, mechanism)),
    '',
    '<!-- prettier-ignore-end -->',
  ];
  return `\n${lines.join('\n')}\n`;
}

function exampleSection(example: ExampleRegistry, exampleFile: string, mechanism: Registry): string[] {
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
    ...guaranteeTable(example.guarantees),
    '',
    '**What the example does not guarantee**',
    '',
    ...nonGuaranteeTable(example.nonGuarantees),
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
          codeCell(example.alsoEnforcedIn?.[id] ?? []) || '—',
          testCell(example.alsoProvedBy[id] ?? []) || '—',
        ]),
      ),
  ];
}

function guaranteeTable(guarantees: readonly Guarantee[]): string[] {
  return [
    '| Guarantee | Enforced in | Proved by | Explained in |',
    '| --- | --- | --- | --- |',
    ...guarantees.map((g) =>
      row([`${cell(g.statement)} (\`${g.id}\`)`, codeCell(g.enforcedIn), testCell(g.provedBy), docLink(g.doc)]),
    ),
  ];
}

function nonGuaranteeTable(nonGuarantees: readonly NonGuarantee[]): string[] {
  return [
    '| Not guaranteed | Explained in | Where a test shows the limit |',
    '| --- | --- | --- |',
    ...nonGuarantees.map((n) =>
      row([`${cell(n.statement)} (\`${n.id}\`)`, docLink(n.doc), n.shownBy ? testCell(n.shownBy) : '—']),
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
    throw new Error(`${PAGE} must hold ${BEGIN} and then ${END}, once each`);
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

/** A link to a file; its text drops the top folder (test/, lambdas/, lib/) when two more remain. */
function fileLink(file: string): string {
  const parts = file.split('/');
  const text = parts.length > 2 ? parts.slice(1).join('/') : file;
  return `[${text}](${path.posix.relative(PAGE_DIR, file)})`;
}

function byFile<T extends { file: string }>(refs: readonly T[]): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const ref of refs) groups.set(ref.file, [...(groups.get(ref.file) ?? []), ref]);
  return groups;
}

function codeCell(refs: readonly CodeRef[]): string {
  return [...byFile(refs)]
    .map(([file, symbols]) => `${fileLink(file)}: ${symbols.map((s) => `\`${s.symbol}\``).join(', ')}`)
    .join('<br>');
}

function testCell(refs: readonly TestRef[]): string {
  return [...byFile(refs)]
    .map(([file, tests]) => {
      const runBy = [...new Set(tests.flatMap((t) => t.runBy ?? []))];
      const runners = runBy.length > 0 ? ` (run by ${runBy.map(fileLink).join(', ')})` : '';
      const title = (t: TestRef) => (t.templated ? `"…${literal(t.name.trim())}…"` : `"${literal(t.name)}"`);
      return `${fileLink(file)}${runners}: ${tests.map(title).join('; ')}`;
    })
    .join('<br>');
}

/** A link to a doc page: the page's name as text, the anchor in the link. */
function docLink(doc: DocRef): string {
  const page = path.posix.relative(PAGE_DIR, doc.page);
  return `[${page}](${page}${doc.anchor ? `#${doc.anchor}` : ''})`;
}

if (require.main === module) {
  const file = path.join(ROOT, PAGE);
  const before = fs.readFileSync(file, 'utf8');
  const after = withSection(before, renderSection(REGISTRY, loadExampleRegistry(ROOT), exampleRegistryFile(ROOT)));
  fs.writeFileSync(file, after);
  console.log(`${PAGE}: ${after === before ? 'already up to date' : 'rewritten'} (${after.length} characters)`);
}
