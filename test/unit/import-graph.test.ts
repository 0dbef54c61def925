import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { exampleName } from '../support/example-reach';

/**
 * The import graph's rules (.dependency-cruiser.cjs, run by `npm run lint`): no circle of modules that
 * load each other (in the packages none at all, type-only imports included), the tools never import the example (they load its plug-ins by the name in
 * package.json), only a command's entry point loads the domain (the engines are handed it), the mechanism
 * imports nothing outside it, and inside it layers point one way (core <- aws
 * <- faults <- api <- wiring). Each rule is shown biting on a scratch tree of a few files, with the
 * repository's own configuration.
 */
const ROOT = join(__dirname, '..', '..');
const CONFIG = join(ROOT, '.dependency-cruiser.cjs');
const DEPCRUISE = join(ROOT, 'node_modules', '.bin', 'depcruise');
// The rules are keyed on the example's folder as package.json names it, so the scratch trees are too.
const EXAMPLE = exampleName(ROOT);

function cruise(cwd: string, folders: string[]): { status: number | null; output: string } {
  const result = spawnSync(DEPCRUISE, [...folders, '--config', CONFIG, '--output-type', 'err'], {
    cwd,
    encoding: 'utf8',
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

/** A scratch tree: a tsconfig and the files given, each one line of imports. */
function scratchTree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'import-graph-'));
  writeFileSync(join(root, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'preserve' } }));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

const trees: string[] = [];
afterAll(() => trees.forEach((tree) => rmSync(tree, { recursive: true, force: true })));

test('the repository breaks none of the rules', () => {
  const { status, output } = cruise(ROOT, ['bin', 'lib', 'lambdas', 'packages', 'tooling', 'test']);

  expect(output).toContain('no dependency violations found');
  expect(status).toBe(0);
});

test.each([
  [
    'a tool importing the example',
    {
      'packages/tools/src/sim.ts': `import { tooling } from '../../../tooling/${EXAMPLE}';\nexport const t = tooling;\n`,
      [`tooling/${EXAMPLE}/index.ts`]: 'export const tooling = 1;\n',
    },
    'tools-never-import-the-example',
  ],
  [
    "a circle through a tool and the example's plug-in",
    {
      'packages/tools/src/engine.ts': "import { plugin } from './registry';\nexport const engine = () => plugin;\n",
      'packages/tools/src/registry.ts': `import { tooling } from '../../../tooling/${EXAMPLE}';\nexport const plugin = tooling;\n`,
      [`tooling/${EXAMPLE}/index.ts`]:
        "import { engine } from '../../packages/tools/src/engine';\nexport const tooling = { engine };\n",
    },
    'no-circular',
  ],
  [
    "a tool's engine loading the domain itself instead of being handed it",
    {
      'packages/tools/src/proof-kit/verify.ts':
        "import { loadDomain } from '../load-domain';\nexport const consumers = () => loadDomain('.').consumers;\n",
      'packages/tools/src/load-domain.ts': 'export const loadDomain = (root: string) => ({ root, consumers: [] });\n',
    },
    'only-entry-points-load-the-domain',
  ],
  [
    'the mechanism importing a tool',
    {
      'packages/runtime/src/relay.ts': "import { x } from '../../tools/src/dlq';\nexport const y = x;\n",
      'packages/tools/src/dlq.ts': 'export const x = 1;\n',
    },
    'mechanism-imports-nothing-outside-it',
  ],
  ...(
    [
      'packages/runtime/src/faults',
      'packages/cdk/src',
      'packages/tools/src',
      'packages/tools/src/proof-kit',
      'packages/tools/src/dlq',
      'packages/tools/src/bench',
      'packages/tools/src/local-runtime',
      'packages/tools/src/simulation',
    ] as const
  ).map((folder): [string, Record<string, string>, string] => [
    `a circle of type-only imports in ${folder}`,
    {
      [`${folder}/plan.ts`]: "import type { Bypass } from './bypass';\nexport type Plan = { bypass?: Bypass };\n",
      [`${folder}/bypass.ts`]:
        "import type { Plan } from './plan';\nexport type Bypass = string[];\nexport const of = (p: Plan) => p.bypass;\n",
    },
    'no-circular-types-in-the-packages',
  ]),
  ...(
    [
      ['core', 'consumer/ports.ts', 'aws/clients.ts'],
      ['aws', 'aws/inbox-ledger.ts', 'faults/inbox-bypass.ts'],
      ['faults', 'faults/plan.ts', 'api/http.ts'],
      ['api', 'api/http.ts', 'wiring/consumer-wiring.ts'],
    ] as const
  ).map(([layer, from, to]): [string, Record<string, string>, string] => [
    `the mechanism's ${layer} layer importing ${to.split('/')[0]}/`,
    {
      [`packages/runtime/src/${from}`]: `import { x } from '${'../'.repeat(from.split('/').length - 1)}${to.replace('.ts', '')}';\nexport const y = x;\n`,
      [`packages/runtime/src/${to}`]: 'export const x = 1;\n',
    },
    `layers-point-one-way-${layer}`,
  ]),
])('%s is refused', (_what, files, rule) => {
  // Arrange
  const tree = scratchTree(files);
  trees.push(tree);

  // Act
  const { status, output } = cruise(tree, [...new Set(Object.keys(files).map((path) => path.split('/')[0]))]);

  // Assert
  expect(output).toContain(`error ${rule}:`);
  expect(status).not.toBe(0);
});

test('outside the packages a type-only import back is no circle: it loads nothing', () => {
  // Arrange
  const tree = scratchTree({
    [`tooling/${EXAMPLE}/contract.ts`]:
      "import type { Engine } from './engine';\nexport type Contract = { engine: Engine };\n",
    [`tooling/${EXAMPLE}/engine.ts`]:
      "import { check } from './contract-check';\nexport type Engine = () => void;\nexport const engine: Engine = check;\n",
    [`tooling/${EXAMPLE}/contract-check.ts`]:
      "import type { Contract } from './contract';\nexport const check = (c?: Contract) => void c;\n",
  });
  trees.push(tree);

  // Act
  const { output } = cruise(tree, ['tooling']);

  // Assert
  expect(output).not.toContain('no-circular');
});

test("a command's entry point loads the domain and hands it down: it may import the loader", () => {
  // Arrange
  const tree = scratchTree({
    'packages/tools/src/dlq/cli.ts':
      "import { loadDomain } from '../load-domain';\nexport const domain = () => loadDomain('.');\n",
    'packages/tools/src/load-domain.ts': 'export const loadDomain = (root: string) => ({ root, consumers: [] });\n',
  });
  trees.push(tree);

  // Act
  const { status, output } = cruise(tree, ['packages']);

  // Assert
  expect(output).not.toContain('only-entry-points-load-the-domain');
  expect(status).toBe(0);
});

test("the mechanism's index files sit over every layer: they may import any of them", () => {
  // Arrange
  const tree = scratchTree({
    'packages/runtime/src/index.ts': "export { wiring } from './wiring/consumer-wiring';\n",
    'packages/runtime/src/testing/index.ts': "export { wiring } from '../wiring/consumer-wiring';\n",
    'packages/runtime/src/wiring/consumer-wiring.ts': 'export const wiring = 1;\n',
  });
  trees.push(tree);

  // Act
  const { status, output } = cruise(tree, ['packages']);

  // Assert
  expect(output).not.toContain('layers-point-one-way');
  expect(status).toBe(0);
});
