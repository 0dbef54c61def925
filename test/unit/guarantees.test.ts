import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { checkRegistries, checkRegistry } from '../guarantees/check';
import { exampleRegistryFile, loadExampleRegistry } from '../guarantees/example';
import { REGISTRY, type ExampleRegistry, type Guarantee, type Registry } from '../guarantees/registry';
import {
  currentSection,
  EXAMPLE_PAGE,
  MECHANISM_PAGE,
  RENDER_COMMAND,
  renderExampleSection,
  renderMechanismSection,
} from '../guarantees/render';
import { exampleReach } from '../support/example-reach';

/**
 * The guarantees are two registries, not a hand-kept table: the mechanism's (test/guarantees/registry.ts)
 * and the example's (beside the example, loaded by the name in package.json). Every file, symbol, test
 * title and doc page they name must exist, nothing the mechanism's cites may reach the example, and
 * docs/guarantees.md shows what they render. This file reaches nothing of the example, so it runs, and
 * checks the mechanism's registry, with the example deleted (test/unit/another-domain.test.ts).
 */
const ROOT = path.join(__dirname, '..', '..');
const EXAMPLE = loadExampleRegistry(ROOT);

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

// A small real entry of the mechanism: one symbol, one test, one page.
const TENANT = realEntry('tenant-in-inbox-key');
const UNIT_TEST = TENANT.provedBy[0];

test("the mechanism's registry has guarantees and non-guarantees; every file, symbol, test and page of both registries exists, and nothing the mechanism's cites reaches the example", () => {
  const registry = REGISTRY;

  const problems = checkRegistries(registry, EXAMPLE, ROOT);

  expect(problems).toEqual([]);
  expect(registry.guarantees.length).toBeGreaterThanOrEqual(40);
  expect(registry.nonGuarantees.length).toBeGreaterThanOrEqual(5);
});

test.each([
  [MECHANISM_PAGE, () => renderMechanismSection(REGISTRY)],
  [EXAMPLE_PAGE, () => renderExampleSection(EXAMPLE, exampleRegistryFile(ROOT), REGISTRY)],
])(`%s shows what the registries render (if not: ${RENDER_COMMAND})`, (page, render) => {
  const text = fs.readFileSync(path.join(ROOT, page), 'utf8');

  const rendered = render();

  const fix = `${page} is out of date with the registries: run \`${RENDER_COMMAND}\``;
  expect({ section: currentSection(text), fix }).toEqual({ section: rendered, fix });
});

test("the mechanism's page holds none of the example's rows, and the example's none of the mechanism's own", () => {
  const mechanism = renderMechanismSection(REGISTRY);
  const example = renderExampleSection(EXAMPLE, exampleRegistryFile(ROOT), REGISTRY);

  expect(mechanism).not.toContain("The example's guarantees");
  expect(example).not.toContain("**The mechanism's guarantees** (");
});

test('the rendered sections are narrow: no cell padding, and every link is relative to its page', () => {
  const mechanism = renderMechanismSection(REGISTRY);
  const example = renderExampleSection(EXAMPLE, exampleRegistryFile(ROOT), REGISTRY);

  const rows = (section: string) => section.split('\n').filter((line) => line.startsWith('|'));
  const targets = (section: string) => [...section.matchAll(/\]\(([^)]+)\)/g)].map(([, target]) => target);

  expect([...rows(mechanism), ...rows(example)].filter((line) => /\s{2}|-{4}/.test(line))).toEqual([]);
  expect([...targets(mechanism), ...targets(example)].filter((target) => /^(\/|[a-z]+:)/.test(target))).toEqual([]);
  expect(targets(mechanism)).toContain('../test/integration/entity-effect.test.ts');
  expect(targets(mechanism)).toContain('../docs/architecture.md#a-transactional-outbox-not-write-then-publish');
});

describe('the checker catches drift, on a copy of a real entry', () => {
  test('a test renamed in its file, the registry still naming the old title', () => {
    const root = repositoryCopyFor(TENANT);
    edit(root, UNIT_TEST.file, (text) =>
      text.replace(`'${UNIT_TEST.name}'`, `'two tenants under one eventId are one event'`),
    );

    const problems = checkRegistry(only(TENANT), root);

    expect(problems).toEqual([
      `tenant-in-inbox-key: proved by ${UNIT_TEST.file}: no test, it or describe titled "${UNIT_TEST.name}"`,
    ]);
  });

  test('a test file deleted', () => {
    const root = repositoryCopyFor(TENANT);
    fs.rmSync(path.join(root, UNIT_TEST.file));

    const problems = checkRegistry(only(TENANT), root);

    expect(problems).toEqual([`tenant-in-inbox-key: proved by ${UNIT_TEST.file}: file does not exist`]);
  });

  test('a symbol that does not exist in its file', () => {
    const entry: Guarantee = {
      ...TENANT,
      enforcedIn: [{ ...TENANT.enforcedIn[0], symbol: 'inboxKeyOfAnotherTenant' }],
    };

    const problems = checkRegistry(only(entry), ROOT);

    expect(problems).toEqual([
      `tenant-in-inbox-key: enforced in ${TENANT.enforcedIn[0].file}: no declaration of inboxKeyOfAnotherTenant in it`,
    ]);
  });

  test('a symbol that the file only imports, or names in a comment, is not declared there', () => {
    // packages/runtime/src/api/http.ts imports isDependencyFailure from the adapters; the old table placed it there.
    const entry: Guarantee = {
      ...TENANT,
      enforcedIn: [{ file: 'packages/runtime/src/api/http.ts', symbol: 'isDependencyFailure' }],
    };

    const problems = checkRegistry(only(entry), ROOT);

    expect(problems).toEqual([
      'tenant-in-inbox-key: enforced in packages/runtime/src/api/http.ts: no declaration of isDependencyFailure in it',
    ]);
  });

  test('a guarantee with no test', () => {
    const entry: Guarantee = { ...TENANT, provedBy: [] };

    const problems = checkRegistry(only(entry), ROOT);

    expect(problems).toEqual(['tenant-in-inbox-key: lists no test']);
  });

  test('a doc page that does not exist, or a heading it does not have', () => {
    const missingPage: Guarantee = { ...TENANT, doc: { page: 'docs/tenants.md' } };
    const missingAnchor: Guarantee = { ...TENANT, id: 'tenant-anchor', doc: { page: 'docs/runbook.md', anchor: 'x' } };

    const problems = checkRegistry(only(missingPage, missingAnchor), ROOT);

    expect(problems).toEqual([
      'tenant-in-inbox-key: doc page docs/tenants.md does not exist',
      'tenant-anchor: doc page docs/runbook.md has no heading #x',
    ]);
  });

  test('a test mentioned only in a comment does not count', () => {
    const root = repositoryCopyFor(TENANT);
    edit(root, UNIT_TEST.file, (text) =>
      text.replace(`test('${UNIT_TEST.name}'`, `// was: ${UNIT_TEST.name}\n  test('two tenants are two events'`),
    );

    const problems = checkRegistry(only(TENANT), root);

    expect(problems).toEqual([
      `tenant-in-inbox-key: proved by ${UNIT_TEST.file}: no test, it or describe titled "${UNIT_TEST.name}" (the text is in the file, but not as a test title)`,
    ]);
  });

  test('a part of a templated title not marked templated, or a plain title marked so', () => {
    const templated = realEntry('dependency-failure-503').provedBy[1];
    const entry: Guarantee = {
      ...TENANT,
      provedBy: [
        { file: templated.file, name: templated.name },
        { ...UNIT_TEST, templated: true },
      ],
    };

    const problems = checkRegistry(only(entry), ROOT);

    expect(problems).toEqual([
      `tenant-in-inbox-key: proved by ${templated.file}: no test, it or describe titled "${templated.name}" (it is part of a templated title: mark it templated)`,
      `tenant-in-inbox-key: proved by ${UNIT_TEST.file}: no test, it or describe titled "${UNIT_TEST.name}" (it is a plain title: it is not templated)`,
    ]);
  });

  test('two guarantees that share an id', () => {
    const copy: Guarantee = { ...TENANT };

    const problems = checkRegistry(only(TENANT, copy), ROOT);

    expect(problems).toEqual(['tenant-in-inbox-key: id used by 2 entries']);
  });

  test('a shared suite run by a file that does not import it', () => {
    const contract = realEntry('simulation-contracts').provedBy[0];
    const entry: Guarantee = { ...TENANT, provedBy: [{ ...contract, runBy: [UNIT_TEST.file] }] };

    const problems = checkRegistry(only(entry), ROOT);

    expect(problems).toEqual([
      `tenant-in-inbox-key: proved by ${contract.file} run by ${UNIT_TEST.file}: ${UNIT_TEST.file} does not import ${contract.file}`,
    ]);
  });
});

describe("the line between the mechanism's registry and the example's", () => {
  const EXTRA_PROOF = {
    file: 'test/exactly-once/recording-past-deadline.test.ts',
    name: 'the deadline fires while a provider answer is being recorded: the record waits for the record and ends applied',
  };
  const example = (over: Partial<ExampleRegistry>): ExampleRegistry => ({
    guarantees: [],
    nonGuarantees: [],
    alsoProvedBy: {},
    ...over,
  });
  const reachesOnly =
    (...files: string[]) =>
    (file: string) =>
      files.includes(file);

  test("this test file and both modules it reads the mechanism's registry through reach nothing of the example", () => {
    const reaches = exampleReach(ROOT);

    expect(['test/unit/guarantees.test.ts', 'test/guarantees/render.ts'].filter(reaches)).toEqual([]);
  });

  test("a test of the mechanism's registry that reaches the example fails, saying where it belongs", () => {
    const problems = checkRegistries(only(TENANT), undefined, ROOT, reachesOnly(UNIT_TEST.file));

    expect(problems).toEqual([
      `tenant-in-inbox-key: proved by ${UNIT_TEST.file}: ${UNIT_TEST.file} reaches the example (cite it in the example's alsoProvedBy)`,
    ]);
  });

  test("code of the example named by the mechanism's registry fails, saying where it belongs", () => {
    const code = TENANT.enforcedIn[0].file;

    const problems = checkRegistries(only(TENANT), undefined, ROOT, reachesOnly(code));

    expect(problems).toEqual([
      `tenant-in-inbox-key: enforced in ${code}: it is the example's (alsoEnforcedIn of the example's registry)`,
    ]);
  });

  test("an id in the example's alsoProvedBy or alsoEnforcedIn that the mechanism's registry does not have fails", () => {
    const unknown = example({
      alsoProvedBy: { 'tenant-in-the-inbox-key': [EXTRA_PROOF] },
      alsoEnforcedIn: { 'tenant-in-the-key': [TENANT.enforcedIn[0]] },
    });

    const problems = checkRegistries(only(TENANT), unknown, ROOT, reachesOnly(EXTRA_PROOF.file));

    expect(problems).toEqual([
      "tenant-in-the-key (the example's alsoEnforcedIn): no guarantee or non-guarantee of the mechanism's registry has this id",
      "tenant-in-the-inbox-key (the example's alsoProvedBy): no guarantee or non-guarantee of the mechanism's registry has this id",
    ]);
  });

  test("an extra proof that reaches nothing of the example fails: it belongs in the mechanism's registry", () => {
    const neutral = example({ alsoProvedBy: { 'tenant-in-inbox-key': [EXTRA_PROOF] } });

    const problems = checkRegistries(only(TENANT), neutral, ROOT, reachesOnly());

    expect(problems).toEqual([
      `tenant-in-inbox-key (the example's alsoProvedBy): proved by ${EXTRA_PROOF.file}: it reaches nothing of the example (cite it in the mechanism's registry)`,
    ]);
  });

  test("the example's entries are held to the repository as the mechanism's are, and share no id with them", () => {
    const missing: Guarantee = {
      ...TENANT,
      id: 'bookings-rule',
      provedBy: [{ file: 'test/unit/gone.test.ts', name: 'x' }],
    };
    const clash: Guarantee = { ...TENANT };

    const problems = checkRegistries(only(TENANT), example({ guarantees: [missing, clash] }), ROOT, reachesOnly());

    expect(problems).toEqual([
      "example's bookings-rule: proved by test/unit/gone.test.ts: file does not exist",
      "tenant-in-inbox-key: id used by the mechanism's registry and the example's",
    ]);
  });

  test("without an example registry, the mechanism's page lists the mechanism and the example's page says it lists nothing", () => {
    const mechanism = renderMechanismSection(only(TENANT));
    const section = renderExampleSection(undefined, 'tooling/sample-domain/guarantees.ts', only(TENANT));

    expect(mechanism).toContain("**The mechanism's guarantees** (1)");
    expect(section).toContain(
      "**The example's guarantees**: the example has no registry (tooling/sample-domain/guarantees.ts), so it lists none.",
    );
    expect(section).not.toContain('proved again through the example');
  });

  test("the example's extra proofs are rendered under the mechanism's statement they prove", () => {
    const extra = example({ alsoProvedBy: { 'tenant-in-inbox-key': [EXTRA_PROOF] } });

    const section = renderExampleSection(extra, 'tooling/sample-domain/guarantees.ts', only(TENANT));

    const rows = section.split('\n').filter((line) => line.startsWith(`| ${TENANT.statement} (\`${TENANT.id}\`) |`));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toContain(`"${EXTRA_PROOF.name}"`);
    expect(rows[0]).not.toContain(UNIT_TEST.name);
  });

  describe('the example registry is found by the name in package.json', () => {
    function rootNaming(example: string): string {
      const root = fs.mkdtempSync(path.join(os.tmpdir(), 'guarantees-'));
      copies.push(root);
      fs.writeFileSync(path.join(root, 'package.json'), JSON.stringify({ exactlyOnce: { example } }));
      return root;
    }

    test('an example without one has no entries', () => {
      const root = rootNaming('sample-domain');

      expect(exampleRegistryFile(root)).toBe('tooling/sample-domain/guarantees.ts');
      expect(loadExampleRegistry(root)).toBeUndefined();
    });

    test('a file that exports no `guarantees` is an error, not an empty registry', () => {
      const root = rootNaming('sample-domain');
      fs.mkdirSync(path.join(root, 'tooling/sample-domain'), { recursive: true });
      fs.writeFileSync(path.join(root, 'tooling/sample-domain/guarantees.ts'), 'export const registry = {};\n');

      expect(() => loadExampleRegistry(root)).toThrow(
        'tooling/sample-domain/guarantees.ts exports no `guarantees` (an ExampleRegistry, test/guarantees/registry.ts).',
      );
    });
  });
});
