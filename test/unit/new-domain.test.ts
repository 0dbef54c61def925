import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { domainTemplate } from '@exactly-once/tools/scaffolder/domain-template';
import { main } from '@exactly-once/tools/scaffolder/new-domain';
import { exampleReach } from '../support/example-reach';

/**
 * `npm run new:domain <name>` on a small application of its own (an example named "sample"): what it
 * removes (the example's folders, the tests that reach them by import, through a support file, or by
 * the @reachesExample tag), what it keeps and writes, and each refusal, which changes nothing. That the
 * result passes the tiers is the another-domain tests' (they run it on a copy of this repository).
 */
const REPO = resolve(__dirname, '../..');
const APP_STACK = "import { ExactlyOnceStack } from './sample/sample-stack';\nexport { ExactlyOnceStack };\n";
const MANIFEST = `{\n  "name": "app",\n  "exactlyOnce": {\n    "example": "sample"\n  }\n}\n`;
const APPLICATION: Record<string, string> = {
  'package.json': MANIFEST,
  'lib/app-stack.ts': APP_STACK,
  'lib/config.ts': 'export const config = {};\n',
  'lambdas/sample/domain/thing.ts': 'export const thing = 1;\n',
  'lib/sample/sample-stack.ts': 'export class ExactlyOnceStack {}\n',
  'tooling/sample/index.ts': 'export const tooling = {};\n',
  'test/unit/thing.test.ts': "import { thing } from '../../lambdas/sample/domain/thing';\n",
  'test/support/sample-stack.ts': "export { ExactlyOnceStack } from '../../lib/sample/sample-stack';\n",
  'test/infra/via-support.test.ts': "import { ExactlyOnceStack } from '../support/sample-stack';\n",
  'test/runtime/over-http.test.ts': "/**\n * @reachesExample drives the example's API\n */\ntest('x', () => {});\n",
  'test/unit/kept.test.ts': "import { config } from '../../lib/config';\n",
  'test/support/kept-helper.ts': 'export const helper = 1;\n',
  'test/support/slowest-files.cjs':
    "module.exports = [\n  'test/runtime/over-http.test.ts',\n  'test/unit/kept.test.ts',\n];\n",
};

let root: string;
let errors: string[];

function filesOf(dir: string): Record<string, string> {
  return Object.fromEntries(
    readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .filter((path) => statSync(join(dir, path)).isFile())
      .map((path) => [path, readFileSync(join(dir, path), 'utf8')]),
  );
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'new-domain-'));
  for (const [path, text] of Object.entries(APPLICATION)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  errors = [];
  jest.spyOn(console, 'log').mockImplementation(() => undefined);
  jest.spyOn(console, 'error').mockImplementation((line: string) => void errors.push(line));
});

afterEach(() => {
  jest.restoreAllMocks();
  rmSync(root, { recursive: true, force: true });
});

test('the example and every test that reaches it are removed; the skeleton is written under the new name and the application points at it', async () => {
  // Arrange
  const skeleton = domainTemplate('payments');

  // Act
  const status = await main(['payments'], root);

  // Assert
  expect(status).toBe(0);
  const files = filesOf(root);
  expect(Object.keys(files).filter((path) => path.includes('sample'))).toEqual([]);
  for (const gone of ['test/unit/thing.test.ts', 'test/infra/via-support.test.ts', 'test/runtime/over-http.test.ts'])
    expect(files[gone]).toBeUndefined();
  expect(files['test/unit/kept.test.ts']).toBe(APPLICATION['test/unit/kept.test.ts']);
  expect(files['test/support/kept-helper.ts']).toBe(APPLICATION['test/support/kept-helper.ts']);
  // The test sequencer's list names no removed test: it would fail its own test in the new domain.
  expect(files['test/support/slowest-files.cjs']).toBe("module.exports = [\n  'test/unit/kept.test.ts',\n];\n");
  expect(readdirSync(join(root, 'test'))).not.toContain('runtime');
  for (const { path, text } of skeleton) expect(files[path]).toBe(text);
  expect(skeleton.map(({ path }) => path)).toEqual(
    expect.arrayContaining([
      'lambdas/payments/consumers.ts',
      'lib/payments/payments-stack.ts',
      'tooling/payments/index.ts',
      'test/unit/rooms-consumer.test.ts',
    ]),
  );
  expect(skeleton.filter(({ path, text }) => `${path}${text}`.includes('__example__'))).toEqual([]);
  expect(JSON.parse(files['package.json']).exactlyOnce.example).toBe('payments');
  expect(files['package.json']).toBe(MANIFEST.replace('"sample"', '"payments"'));
  expect(files['lib/app-stack.ts']).toBe(APP_STACK.replace('./sample/sample-stack', './payments/payments-stack'));
});

test('--dry-run lists what would go and come, and changes nothing', async () => {
  // Arrange
  const before = filesOf(root);
  const printed: string[] = [];
  jest.spyOn(console, 'log').mockImplementation((line: string) => void printed.push(line));

  // Act
  const status = await main(['payments', '--dry-run'], root);

  // Assert
  expect(status).toBe(0);
  expect(filesOf(root)).toEqual(before);
  expect(printed).toEqual(
    expect.arrayContaining([
      'new:domain: would remove the example "sample" (3 files) and 4 tests that reach it',
      '  - test/runtime/over-http.test.ts',
      '  + lib/payments/payments-stack.ts',
    ]),
  );
});

test.each([
  ['a name that is not one', ['Payments'], 1, '"Payments" is not a domain name'],
  ["the example's own name", ['sample'], 1, '"sample" is already the example\'s name'],
  ['no name', [], 2, 'name the new domain'],
  ['an unknown flag', ['payments', '--force'], 2, "Unknown option '--force'"],
])('%s is refused with one line, and nothing changes', async (_case, argv, expected, message) => {
  // Arrange
  const before = filesOf(root);

  // Act
  const status = await main(argv, root);

  // Assert
  expect(status).toBe(expected);
  expect(errors).toHaveLength(1);
  expect(errors[0]).toContain(message);
  expect(filesOf(root)).toEqual(before);
});

test.each([
  [
    'a folder of the new name exists',
    () => mkdirSync(join(root, 'lib/payments')),
    'lib/payments/ exists: choose another name',
  ],
  [
    'a file of the skeleton exists outside the example',
    () => writeFileSync(join(root, 'test/unit/create-booking.test.ts'), 'mine\n'),
    'test/unit/create-booking.test.ts exists and is not the example',
  ],
  [
    'package.json names no example',
    () => writeFileSync(join(root, 'package.json'), '{ "name": "app" }\n'),
    'package.json names no example',
  ],
  [
    "lib/app-stack.ts does not import the example's stack",
    () => writeFileSync(join(root, 'lib/app-stack.ts'), "export { Stack } from './elsewhere';\n"),
    "lib/app-stack.ts has no import from './sample/'",
  ],
])('refused when %s: one line, and nothing changes', async (_case, arrange, message) => {
  // Arrange
  arrange();
  const before = filesOf(root);

  // Act
  const status = await main(['payments'], root);

  // Assert
  expect(status).toBe(1);
  expect(errors).toEqual([expect.stringContaining(message)]);
  expect(filesOf(root)).toEqual(before);
});

test("every runtime test that runs on the example's stack is found to reach the example, so new:domain removes it; the generic checks on the application's stack are kept", () => {
  // Arrange: the test files that start the application's stack (not the probe's) by the two fixtures that
  // can. Those that take their requests from the application's own domain (test/runtime/application-domain.ts)
  // are the checks every application keeps; the others run the example's requests.
  const runtimeTests = readdirSync(join(REPO, 'test/runtime')).filter((file) => file.endsWith('.test.ts'));
  const sourceOf = (file: string) => readFileSync(join(REPO, 'test/runtime', file), 'utf8');
  const onAppStack = runtimeTests.filter(
    (file) => /startSynthesizedStack\(/.test(sourceOf(file)) || /useProofKitRuntime\('[^']+'\)/.test(sourceOf(file)),
  );
  const generic = onAppStack.filter((file) => /from '\.\/application-domain'/.test(sourceOf(file)));
  const onExampleStack = onAppStack.filter((file) => !generic.includes(file));
  const reaches = exampleReach(REPO);
  const reached = (file: string) => reaches(relative(REPO, join(REPO, 'test/runtime', file)));

  // Act
  const missed = onExampleStack.filter((file) => !reached(file));
  const removedGeneric = generic.filter(reached);

  // Assert
  expect(onExampleStack.length).toBeGreaterThanOrEqual(3);
  expect(missed).toEqual([]);
  expect(generic).toEqual(expect.arrayContaining(['caller-scope.test.ts', 'end-to-end.test.ts']));
  expect(removedGeneric).toEqual([]);
});
