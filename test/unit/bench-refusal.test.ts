import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runBench } from '@exactly-once/tools/bench/run';

// A tooling module that gives consumers but no proof domain, named to the bench as its command line would.
const NO_PROOF = join(mkdtempSync(join(tmpdir(), 'bench-tooling-')), 'tooling.js');
writeFileSync(NO_PROOF, "exports.tooling = { consumers: [], outboxTableOutput: 'T', isEvent: () => false };\n");

afterEach(() => jest.restoreAllMocks());

/**
 * `npm run bench` on an example without a proof domain: one line saying what is missing, exit 2,
 * before anything is synthesized or started.
 */
test('without a proof domain the bench refuses in one line and starts nothing', async () => {
  const errors = jest.spyOn(console, 'error').mockImplementation(() => undefined);
  const logs = jest.spyOn(console, 'log').mockImplementation(() => undefined);

  const status = await runBench(['--profile', 'quick', '--tooling', NO_PROOF]);

  expect(status).toBe(2);
  expect(errors.mock.calls).toEqual([
    [
      "bench: the example's tooling module gives no proof domain (`proof`, packages/tools/src/proof-kit/domain.ts): the bench has no plan to send",
    ],
  ]);
  expect(logs).not.toHaveBeenCalled();
});

test('an unknown profile is refused with the usage, exit 2', async () => {
  const errors = jest.spyOn(console, 'error').mockImplementation(() => undefined);

  const status = await runBench(['--profile', 'huge']);

  expect(status).toBe(2);
  expect(String(errors.mock.calls[0][0])).toMatch(/^bench: unknown profile "huge"\nUsage: npm run bench/);
});
