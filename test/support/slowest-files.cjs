/**
 * The test files that take longest, longest first, as measured in `.ci/run` on a 2-core machine. Jest
 * orders a run by the durations it cached from the last one, and without a cache (a fresh clone, a CI
 * machine) by file size, which put these small files last: the run then ended with one worker on a
 * five-minute file and the other idle. test/support/sequencer.cjs starts them first when nothing is cached.
 * test/unit/jest-sequencer.test.ts holds every entry to a file that exists; `npm run new:domain` drops the
 * entries of the tests it removes with the example.
 */
module.exports = [
  'test/unit/another-domain-runtime.test.ts',
  'test/runtime/proof-kit-all-faults.test.ts',
  'test/runtime/proof-kit.test.ts',
  'test/runtime/outages.test.ts',
  'test/unit/packed-fork.test.ts',
  'test/runtime/proof-kit-adversarial.test.ts',
  'test/unit/another-domain.test.ts',
  'test/unit/another-domain-tiers.test.ts',
  'test/simulation/campaign.test.ts',
  'test/unit/new-consumer.test.ts',
  'test/exactly-once/mechanism-alone.test.ts',
  'test/infra/all.suite.ts',
  'test/unit/consumers.test.ts',
  'test/runtime/dlq-tool.test.ts',
  'test/integration/pipelines.test.ts',
  'test/runtime/artillery.test.ts',
  'test/simulation/cli.test.ts',
  'test/unit/cli-help.test.ts',
];
