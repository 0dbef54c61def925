/**
 * Five projects, split by where they run and how long they take:
 * - unit: pure code and handlers with a mocked SDK (test/exactly-once: the mechanism alone), and
 *   the simulation's own tests;
 * - infra: the synthesized template (no bundling);
 * - long: unit-tier code that runs for a minute or more: the 100-schedule simulation campaign, the
 *   scaffolder generating consumers into a copy of the repository and type-checking it, the
 *   simulation CLI sharing schedules over processes, the mechanism type-checked and tested in a copy
 *   of the repository without the example, another domain (test/fixtures/bookings) in place of the shop
 *   in a copy, and that copy's `npm start` under the proof kit's smoke run with every fault and the bench; an application
 *   built outside the repository on the packed workspace packages;
 * - integration: real emulators (DynamoDB Local, fauxqs) started by globalSetup;
 * - runtime: the local runtime (`npm start`) itself, which starts its own emulators.
 * `npm run test:quick` runs unit and infra; `npm test` runs all five.
 * @swc/jest strips types only; `npm run typecheck` does the type checking.
 */
const transform = { '^.+\\.tsx?$': ['@swc/jest', { jsc: { target: 'es2022' } }] };
// The workspace packages ship TypeScript sources: in an application that installs them under
// node_modules (a fork), they are transformed like the application's own files.
const common = {
  transform,
  transformIgnorePatterns: ['/node_modules/(?!@exactly-once/)'],
  testEnvironment: 'node',
  moduleFileExtensions: ['ts', 'js', 'cjs', 'json'],
};
// Powertools reads its settings when it loads: silence it before any test module loads it. Not for the
// runtime project, whose functions run in processes of their own and must publish their metrics.
const quiet = { setupFiles: ['<rootDir>/test/support/quiet-powertools.ts'] };

const LONG = [
  '<rootDir>/test/unit/another-domain.test.ts',
  '<rootDir>/test/unit/another-domain-tiers.test.ts',
  '<rootDir>/test/unit/another-domain-runtime.test.ts',
  '<rootDir>/test/exactly-once/mechanism-alone.test.ts',
  '<rootDir>/test/simulation/campaign.test.ts',
  '<rootDir>/test/simulation/cli.test.ts',
  '<rootDir>/test/unit/new-consumer.test.ts',
  // Spawns every command's entry point (17 processes): a minute of process start-up, not unit-tier time.
  '<rootDir>/test/unit/cli-help.test.ts',
  // Packs the workspace packages and builds an application on the tarballs outside the repository.
  '<rootDir>/test/unit/packed-fork.test.ts',
];

// The infra files run as one suite (test/infra/all.suite.ts): in one module registry aws-cdk-lib loads
// once, where each file of its own spent most of its time loading it again (about 4x the time). A
// contributor naming one infra file on the command line gets that file alone.
const oneInfraFile = process.argv.some((arg) => /test\/infra\/[^/]+\.test\.ts$/.test(arg));
// Unit files that synthesize a stack run inside that suite too (test/support/synthesizing-unit-files.cjs),
// unless one of them is named on the command line.
const SYNTHESIZING = require('./test/support/synthesizing-unit-files.cjs');
const oneSynthesizingFile = process.argv.some((arg) => SYNTHESIZING.some((file) => arg.endsWith(file)));

module.exports = {
  // Integration and runtime tests talk to real emulators; a unit test never gets near this.
  testTimeout: 60_000,
  // Jest's default on 2 cores is one worker; the runtime and integration suites mostly wait on the
  // emulators, so two workers use the machine (a larger machine gets one per core).
  maxWorkers: '100%',
  // A worker that ran many files takes 0.5-1 s to exit after its last one, with nothing left running (no
  // handle, no timer: a probe timer in every file never fired after the last), and Jest's default 500 ms
  // then kills it and warns of a leak. A handle really left open still holds the worker past 5 s and warns.
  workerGracefulExitTimeout: 5_000,
  // The longest files first where Jest has no durations cached (a fresh clone, CI): test/support/sequencer.cjs.
  testSequencer: '<rootDir>/test/support/sequencer.cjs',
  projects: [
    {
      ...common,
      ...quiet,
      displayName: 'unit',
      // A unit file that reads the domain (package.json's example, the application's files, a command)
      // must be on test/support/domain-tests.cjs, the files the another-domain copy runs of this tier.
      setupFilesAfterEnv: ['<rootDir>/test/support/domain-reads-setup.ts'],
      testMatch: [
        '<rootDir>/test/exactly-once/**/*.test.ts',
        '<rootDir>/test/unit/**/*.test.ts',
        '<rootDir>/test/simulation/**/*.test.ts',
      ],
      testPathIgnorePatterns: [
        '/node_modules/',
        ...LONG.map((file) => file.replace('<rootDir>', '')),
        ...(oneSynthesizingFile ? [] : SYNTHESIZING.map((file) => `/${file}`)),
      ],
    },
    {
      ...common,
      ...quiet,
      displayName: 'infra',
      testMatch: [oneInfraFile ? '<rootDir>/test/infra/*.test.ts' : '<rootDir>/test/infra/all.suite.ts'],
      setupFiles: [...quiet.setupFiles, '<rootDir>/test/support/quiet-validation-report.ts'],
    },
    { ...common, ...quiet, displayName: 'long', testMatch: LONG },
    {
      ...common,
      ...quiet,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      globalSetup: '<rootDir>/test/support/emulators-setup.ts',
      globalTeardown: '<rootDir>/test/support/emulators-teardown.ts',
    },
    {
      ...common,
      displayName: 'runtime',
      testMatch: ['<rootDir>/test/runtime/**/*.test.ts'],
      // One `cdk synth` with bundling for every runtime test file.
      globalSetup: '<rootDir>/test/support/runtime-setup.ts',
      globalTeardown: '<rootDir>/test/support/runtime-teardown.ts',
    },
  ],
};
