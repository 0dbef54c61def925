/**
 * The unit-tier test files that read the domain while they run (package.json's example, where the
 * tools' locator finds it; the application's files; the docs; a command they start) and survive
 * `npm run new:domain`: test/unit/another-domain-tiers.test.ts runs these (with the skeleton's own tests
 * and the infra suite) in the copy with another domain. The other unit files run the same code on the
 * same files there as here. test/support/domain-reads-setup.ts fails a unit file that reads the domain
 * and is not listed; test/unit/domain-tests.test.ts holds every entry to a file that exists.
 */
module.exports = [
  'test/unit/access-denied.test.ts',
  'test/unit/bench-domain-effects.test.ts',
  'test/unit/boundaries.test.ts',
  'test/unit/dlq-cli.test.ts',
  'test/unit/dlq-provider-finding-ledger.test.ts',
  'test/unit/domain-tests.test.ts',
  'test/unit/entry-modules.test.ts',
  'test/unit/fault-marks.test.ts',
  'test/unit/faults.test.ts',
  'test/unit/guarantees.test.ts',
  'test/unit/import-graph.test.ts',
  'test/unit/jest-sequencer.test.ts',
  'test/unit/key-on-the-wire.test.ts',
  'test/unit/mechanism-names-no-example.test.ts',
  'test/unit/node-version.test.ts',
  'test/unit/proof-kit-consumers.test.ts',
  'test/unit/repo-config.test.ts',
  'test/unit/report-chaos.test.ts',
  'test/unit/report-explains.test.ts',
  'test/unit/report-pipeline.test.ts',
  'test/unit/report-trace.test.ts',
  'test/unit/tool-sizes.test.ts',
  'test/unit/tooling-module.test.ts',
  'test/unit/tools-bin.test.ts',
];
