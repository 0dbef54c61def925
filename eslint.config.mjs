// @ts-check
import tseslint from 'typescript-eslint';

// The app names a function's code through the entry-point list; importing an entry module would run
// Lambda start-up code (configuration reads, SDK clients) at synth.
const NO_ENTRY_POINT_MODULE = {
  group: ['**/entry-points/*', '!**/entry-points/index'],
  message: 'Name an entry point through lambdas/entry-points (its index); do not import its module.',
};

export default tseslint.config(
  // JavaScript files (configs, the local runtime's worker, the Artillery processor) are linted like TypeScript.
  { ignores: ['node_modules/', 'cdk.out/', '.local/', 'coverage/', 'loadtest-results/', 'bench-results/'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // Domain code must not touch AWS: only adapters (and infrastructure/tooling) import the SDK.
      'no-restricted-imports': 'off',
    },
  },
  {
    // CommonJS run by node directly (no build step): require() is how they import.
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: [
      'lambdas/domain/**/*.ts',
      'lambdas/use-cases/**/*.ts',
      'lambdas/ports/**/*.ts',
      'lambdas/entry-points/**/*.ts',
      'lambdas/handlers/**/*.ts',
      'lambdas/faults/**/*.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            // Powertools' parameter utilities call SSM themselves: an SDK call like any other.
            {
              group: ['@aws-sdk/*', '@aws-lambda-powertools/parameters', '@aws-lambda-powertools/parameters/*'],
              message: 'Only lambdas/adapters may import the AWS SDK.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['bin/**/*.ts', 'lib/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [NO_ENTRY_POINT_MODULE],
        },
      ],
    },
  },
  {
    // The mechanism's CDK side can be lifted out of the example: it imports nothing of the shop, the tools
    // or the tests (a later rule of the same name replaces the one above for these files, so it repeats it).
    files: ['lib/exactly-once/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            NO_ENTRY_POINT_MODULE,
            {
              group: ['**/shop', '**/shop/**', '**/tools/**', '**/test/**', '**/tools/local-runtime/**'],
              message: 'lib/exactly-once imports nothing of the example (lib/shop), the tools or the tests.',
            },
          ],
        },
      ],
    },
  },
);
