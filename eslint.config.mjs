// @ts-check
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'cdk.out/', '.local/', 'coverage/', 'loadtest-results/', '**/*.js', '**/*.mjs'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // Domain code must not touch AWS: only adapters (and infrastructure/tooling) import the SDK.
      'no-restricted-imports': 'off',
    },
  },
  {
    files: ['lambdas/domain/**/*.ts', 'lambdas/use-cases/**/*.ts', 'lambdas/ports/**/*.ts', 'lambdas/handlers/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['@aws-sdk/*'], message: 'Only lambdas/adapters may import the AWS SDK.' }] },
      ],
    },
  },
);
