import * as fs from 'node:fs';
import * as path from 'node:path';
import { exampleReach } from '../support/example-reach';
import { REGISTRY, type CodeRef, type DocRef, type Guarantee, type Registry, type TestRef } from './registry';

/**
 * Writes the generated section of docs/guarantees.md from the registry:
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
 * The section between the markers (markers excluded), rendered from the registry alone: a drifted
 * test file is the checker's to report, not a reason for the page to change. A part of a templated
 * title is shown with ellipses.
 */
export function renderSection(registry: Registry, reachesExample = exampleReach(ROOT)): string {
  const { mechanism, example } = splitByOwner(registry.guarantees, reachesExample);
  const table = (guarantees: readonly Guarantee[]) => [
    '| Guarantee | Enforced in | Proved by | Explained in |',
    '| --- | --- | --- | --- |',
    ...guarantees.map((g) =>
      row([`${cell(g.statement)} (\`${g.id}\`)`, codeCell(g.enforcedIn), testCell(g.provedBy), docLink(g.doc)]),
    ),
  ];
  const lines = [
    `<!-- Generated from test/guarantees/registry.ts by \`${RENDER_COMMAND}\`: edit the registry, not this section. -->`,
    '<!-- prettier-ignore-start -->',
    '',
    `**Proved without the example** (${mechanism.length}): at least one test proving each reaches none of the example's folders, so it still runs, and still proves the guarantee, with the shop deleted.`,
    '',
    ...table(mechanism),
    '',
    `**Proved through the example** (${example.length}): every test proving each reaches the shop (its code, its stack or its plug-ins for the tools). They hold for the shop as shipped; a fork that replaces the shop keeps these tests only by pointing them at its own domain.`,
    '',
    ...table(example),
    '',
    '**Not guaranteed**',
    '',
    '| Not guaranteed | Explained in | Where a test shows the limit |',
    '| --- | --- | --- |',
    ...registry.nonGuarantees.map((n) =>
      row([`${cell(n.statement)} (\`${n.id}\`)`, docLink(n.doc), n.shownBy ? testCell(n.shownBy) : '—']),
    ),
    '',
    '<!-- prettier-ignore-end -->',
  ];
  return `\n${lines.join('\n')}\n`;
}

/**
 * The mechanism's guarantees (one of their tests runs without the example: it reaches none of its
 * folders) and the example's (every one of their tests reaches it), each in the registry's order.
 */
export function splitByOwner(
  guarantees: readonly Guarantee[],
  reachesExample: (file: string) => boolean,
): { mechanism: Guarantee[]; example: Guarantee[] } {
  const runsWithoutExample = (g: Guarantee) => g.provedBy.some((t) => !reachesExample(t.file));
  return {
    mechanism: guarantees.filter(runsWithoutExample),
    example: guarantees.filter((g) => !runsWithoutExample(g)),
  };
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
  const after = withSection(before, renderSection(REGISTRY));
  fs.writeFileSync(file, after);
  console.log(`${PAGE}: ${after === before ? 'already up to date' : 'rewritten'} (${after.length} characters)`);
}
