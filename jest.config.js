/**
 * Four suites, split by where they run:
 * - unit: pure code and handlers with a mocked SDK;
 * - infra: the synthesized template (no bundling);
 * - integration: real emulators (DynamoDB Local, fauxqs) started by globalSetup;
 * - runtime: the local runtime (`npm start`) itself, which starts its own emulators.
 * @swc/jest strips types only; `npm run typecheck` does the type checking.
 */
const transform = { '^.+\\.tsx?$': ['@swc/jest', { jsc: { target: 'es2022' } }] };
const common = { transform, testEnvironment: 'node', moduleFileExtensions: ['ts', 'js', 'json'] };

module.exports = {
  // Integration and runtime tests talk to real emulators; a unit test never gets near this.
  testTimeout: 60_000,
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: ['<rootDir>/test/unit/**/*.test.ts', '<rootDir>/test/simulation/**/*.test.ts'],
    },
    { ...common, displayName: 'infra', testMatch: ['<rootDir>/test/infra/**/*.test.ts'] },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      globalSetup: '<rootDir>/test/support/emulators-setup.ts',
      globalTeardown: '<rootDir>/test/support/emulators-teardown.ts',
    },
    { ...common, displayName: 'runtime', testMatch: ['<rootDir>/test/runtime/**/*.test.ts'] },
  ],
};
