/**
 * Unit-tier test files that synthesize a stack with aws-cdk-lib: they run inside the infra suite
 * (test/infra/all.suite.ts), where aws-cdk-lib is loaded once and the shop's and the probe's default
 * stacks are built once, instead of in unit-project registries of their own, where loading and
 * building were most of their time. jest.config.js keeps them out of the unit project unless one
 * is named on the command line.
 */
module.exports = [
  'test/exactly-once/exactly-once-construct.test.ts',
  'test/simulation/stack-settings.test.ts',
  'test/simulation/shop-stack-settings.test.ts',
];
