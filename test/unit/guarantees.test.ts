import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { checkRegistry } from '../guarantees/check';
import { REGISTRY, type Guarantee, type Registry } from '../guarantees/registry';
import { currentSection, PAGE, RENDER_COMMAND, renderSection, splitByOwner } from '../guarantees/render';
import { exampleReach } from '../support/example-reach';

/**
 * The guarantees are a registry (test/guarantees/registry.ts), not a hand-kept table: every file,
 * symbol, test title and doc page it names must exist, and docs/guarantees.md shows what it renders.
 */
const ROOT = path.join(__dirname, '..', '..');

function realEntry(id: string): Guarantee {
  const entry = REGISTRY.guarantees.find((g) => g.id === id);
  if (entry === undefined) throw new Error(`No guarantee ${id} in the registry`);
  return entry;
}

function only(...guarantees: Guarantee[]): Registry {
  return { guarantees, nonGuarantees: [] };
}

/** A throwaway repository holding only the files an entry names, copied from this one. */
function repositoryCopyFor(entry: Guarantee): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'guarantees-'));
  copies.push(root);
  const files = [
    ...entry.enforcedIn.map((r) => r.file),
    ...entry.provedBy.flatMap((r) => [r.file, ...(r.runBy ?? [])]),
    entry.doc.page,
  ];
  for (const file of new Set(files)) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.copyFileSync(path.join(ROOT, file), path.join(root, file));
  }
  return root;
}

function edit(root: string, file: string, change: (text: string) => string): void {
  const absolute = path.join(root, file);
  const before = fs.readFileSync(absolute, 'utf8');
  const after = change(before);
  if (after === before) throw new Error(`The edit changed nothing in ${file}`);
  fs.writeFileSync(absolute, after);
}

const copies: string[] = [];
afterEach(() => {
  for (const root of copies.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});

// A small real entry: one symbol, four tests in two files, one page.
const CANCEL = realEntry('cancel-idempotent');
const UNIT_TEST = CANCEL.provedBy[0];

test('the registry has guarantees and non-guarantees, and every one of its files, symbols, tests and pages exists', () => {
  const registry = REGISTRY;

  const problems = checkRegistry(registry, ROOT);

  expect(problems).toEqual([]);
  expect(registry.guarantees.length).toBeGreaterThanOrEqual(40);
  expect(registry.nonGuarantees.length).toBeGreaterThanOrEqual(5);
});

test(`docs/guarantees.md shows what the registry renders (if not: ${RENDER_COMMAND})`, () => {
  const page = fs.readFileSync(path.join(ROOT, PAGE), 'utf8');

  const rendered = renderSection(REGISTRY);

  const fix = `${PAGE} is out of date with test/guarantees/registry.ts: run \`${RENDER_COMMAND}\``;
  expect({ section: currentSection(page), fix }).toEqual({ section: rendered, fix });
});

test('the rendered section is narrow: no cell padding, and every link is relative', () => {
  const section = renderSection(REGISTRY);

  const rows = section.split('\n').filter((line) => line.startsWith('|'));
  const targets = [...section.matchAll(/\]\(([^)]+)\)/g)].map(([, target]) => target);

  expect(rows.filter((line) => /\s{2}|-{4}/.test(line))).toEqual([]);
  expect(targets.filter((target) => /^(\/|[a-z]+:)/.test(target))).toEqual([]);
  expect(targets).toContain('../test/unit/cancel-order.test.ts');
});

describe('the checker catches drift, on a copy of a real entry', () => {
  test('a test renamed in its file, the registry still naming the old title', () => {
    const root = repositoryCopyFor(CANCEL);
    edit(root, UNIT_TEST.file, (text) =>
      text.replace(`'${UNIT_TEST.name}'`, `'a second cancel answers with the cancelled order and writes nothing'`),
    );

    const problems = checkRegistry(only(CANCEL), root);

    expect(problems).toEqual([
      `cancel-idempotent: proved by test/unit/cancel-order.test.ts: no test, it or describe titled "${UNIT_TEST.name}"`,
    ]);
  });

  test('a test file deleted', () => {
    const root = repositoryCopyFor(CANCEL);
    fs.rmSync(path.join(root, UNIT_TEST.file));

    const problems = checkRegistry(only(CANCEL), root);

    expect(problems).toEqual(['cancel-idempotent: proved by test/unit/cancel-order.test.ts: file does not exist']);
  });

  test('a symbol that does not exist in its file', () => {
    const entry: Guarantee = { ...CANCEL, enforcedIn: [{ ...CANCEL.enforcedIn[0], symbol: 'cancelOrderTwice' }] };

    const problems = checkRegistry(only(entry), ROOT);

    expect(problems).toEqual([
      'cancel-idempotent: enforced in lambdas/shop/use-cases/cancel-order.ts: no declaration of cancelOrderTwice in it',
    ]);
  });

  test('a symbol that the file only imports, or names in a comment, is not declared there', () => {
    // lambdas/exactly-once/api/http.ts imports isDependencyFailure from the adapters; the old table placed it there.
    const entry: Guarantee = {
      ...CANCEL,
      enforcedIn: [{ file: 'lambdas/exactly-once/api/http.ts', symbol: 'isDependencyFailure' }],
    };

    const problems = checkRegistry(only(entry), ROOT);

    expect(problems).toEqual([
      'cancel-idempotent: enforced in lambdas/exactly-once/api/http.ts: no declaration of isDependencyFailure in it',
    ]);
  });

  test('a guarantee with no test', () => {
    const entry: Guarantee = { ...CANCEL, provedBy: [] };

    const problems = checkRegistry(only(entry), ROOT);

    expect(problems).toEqual(['cancel-idempotent: lists no test']);
  });

  test('a doc page that does not exist, or a heading it does not have', () => {
    const missingPage: Guarantee = { ...CANCEL, doc: { page: 'docs/cancelling.md' } };
    const missingAnchor: Guarantee = { ...CANCEL, id: 'cancel-anchor', doc: { page: 'docs/runbook.md', anchor: 'x' } };

    const problems = checkRegistry(only(missingPage, missingAnchor), ROOT);

    expect(problems).toEqual([
      'cancel-idempotent: doc page docs/cancelling.md does not exist',
      'cancel-anchor: doc page docs/runbook.md has no heading #x',
    ]);
  });

  test('a test mentioned only in a comment does not count', () => {
    const root = repositoryCopyFor(CANCEL);
    edit(root, UNIT_TEST.file, (text) =>
      text.replace(
        `test('${UNIT_TEST.name}'`,
        `// was: ${UNIT_TEST.name}\n  test('a second cancel answers as the first'`,
      ),
    );

    const problems = checkRegistry(only(CANCEL), root);

    expect(problems).toEqual([
      `cancel-idempotent: proved by test/unit/cancel-order.test.ts: no test, it or describe titled "${UNIT_TEST.name}" (the text is in the file, but not as a test title)`,
    ]);
  });

  test('a part of a templated title not marked templated, or a plain title marked so', () => {
    const templated = realEntry('dependency-failure-503').provedBy[1];
    const entry: Guarantee = {
      ...CANCEL,
      provedBy: [
        { file: templated.file, name: templated.name },
        { ...UNIT_TEST, templated: true },
      ],
    };

    const problems = checkRegistry(only(entry), ROOT);

    expect(problems).toEqual([
      `cancel-idempotent: proved by test/unit/create-order.test.ts: no test, it or describe titled "${templated.name}" (it is part of a templated title: mark it templated)`,
      `cancel-idempotent: proved by test/unit/cancel-order.test.ts: no test, it or describe titled "${UNIT_TEST.name}" (it is a plain title: it is not templated)`,
    ]);
  });

  test('two guarantees that share an id', () => {
    const copy: Guarantee = { ...CANCEL };

    const problems = checkRegistry(only(CANCEL, copy), ROOT);

    expect(problems).toEqual(['cancel-idempotent: id used by 2 entries']);
  });

  test('a shared suite run by a file that does not import it', () => {
    const contract = realEntry('simulation-contracts').provedBy[0];
    const entry: Guarantee = { ...CANCEL, provedBy: [{ ...contract, runBy: [UNIT_TEST.file] }] };

    const problems = checkRegistry(only(entry), ROOT);

    expect(problems).toEqual([
      `cancel-idempotent: proved by ${contract.file} run by test/unit/cancel-order.test.ts: test/unit/cancel-order.test.ts does not import ${contract.file}`,
    ]);
  });
});

describe('the page splits the guarantees by whether their proof needs the example', () => {
  const reachesExample = exampleReach(ROOT);

  test('a test of the mechanism alone reaches no example folder; a shop test does', () => {
    expect(reachesExample('test/exactly-once/mechanism-alone.test.ts')).toBe(false);
    expect(reachesExample('test/unit/create-order.test.ts')).toBe(true);
  });

  test('one test that runs without the example puts a guarantee in the first table; none, in the second', () => {
    // Arrange
    const entry = REGISTRY.guarantees[0];
    const alone = {
      ...entry,
      id: 'alone',
      provedBy: [
        { file: 'a.test.ts', name: 'a' },
        { file: 'shop.test.ts', name: 'b' },
      ],
    };
    const shopOnly = { ...entry, id: 'shop-only', provedBy: [{ file: 'shop.test.ts', name: 'b' }] };

    // Act
    const split = splitByOwner([alone, shopOnly], (file) => file.startsWith('shop'));

    // Assert
    expect(split.mechanism.map((g) => g.id)).toEqual(['alone']);
    expect(split.example.map((g) => g.id)).toEqual(['shop-only']);
  });
});
