import * as fs from 'node:fs';
import * as path from 'node:path';

// CommonJS modules of the Jest configuration, loaded as Jest loads them.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const SlowestFirstSequencer = require('../support/sequencer.cjs');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const SLOWEST_FIRST: string[] = require('../support/slowest-files.cjs');

const ROOT = path.resolve(__dirname, '../..');

/** A test as Jest hands it to a sequencer: its path and a context whose file sizes are given; no cache. */
const testOf = (file: string, size: number) => ({
  path: path.join(ROOT, file),
  context: { config: { cache: false }, hasteFS: { getSize: () => size } },
});

test('every file on the slowest-files list exists, once', () => {
  const missing = SLOWEST_FIRST.filter((file) => !fs.existsSync(path.join(ROOT, file)));

  expect(missing).toEqual([]);
  expect(new Set(SLOWEST_FIRST).size).toBe(SLOWEST_FIRST.length);
});

test('with nothing cached, the listed files start first in the list order, then the rest largest first', () => {
  const tests = [
    testOf('test/unit/big.test.ts', 90_000),
    testOf(SLOWEST_FIRST[1], 3_000),
    testOf('test/unit/small.test.ts', 1_000),
    testOf(SLOWEST_FIRST[0], 2_000),
  ];

  const order = new SlowestFirstSequencer({}).sort(tests).map((t: { path: string }) => path.relative(ROOT, t.path));

  expect(order).toEqual([SLOWEST_FIRST[0], SLOWEST_FIRST[1], 'test/unit/big.test.ts', 'test/unit/small.test.ts']);
});

test("with durations cached, Jest's own order stands: a listed file measured short runs after a longer one", () => {
  const tests = [testOf(SLOWEST_FIRST[0], 2_000), testOf('test/unit/measured-long.test.ts', 1_000)];
  const sequencer = new SlowestFirstSequencer({});
  const measured: Record<string, number> = { [tests[0].path]: 5, [tests[1].path]: 500 };
  jest.spyOn(sequencer, 'time').mockImplementation((t: unknown) => measured[(t as { path: string }).path]);

  const order = sequencer.sort(tests).map((t: { path: string }) => path.relative(ROOT, t.path));

  expect(order).toEqual(['test/unit/measured-long.test.ts', SLOWEST_FIRST[0]]);
});
