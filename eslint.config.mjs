// @ts-check
import { readFileSync } from 'node:fs';
import tseslint from 'typescript-eslint';

// The example's folder name (lambdas/<it>, lib/<it>, tooling/<it>), as package.json names it for the tools.
const EXAMPLE = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')).exactlyOnce.example;

// The stack names a function's code by its module path; importing a handler module would run Lambda
// start-up code (a deployed binding's configuration reads and SDK clients) at synth.
const NO_HANDLER_MODULE = {
  group: ['**/entry-points/*', '**/handlers/*', '**/*-handler'],
  message: 'Name a handler module by its path (FunctionWithDefaults entry); do not import it into the CDK app.',
};
// Powertools' parameter utilities call SSM themselves: an SDK call like any other.
const NO_SDK = {
  group: ['@aws-sdk/*', '@aws-lambda-powertools/parameters', '@aws-lambda-powertools/parameters/*'],
  message: `Only the aws/ folders (packages/runtime/src/aws, lambdas/${EXAMPLE}/aws) may import the AWS SDK.`,
};
// The mechanism can be lifted out of the example: it imports nothing of the example, the tools or the tests.
const NOTHING_OF_THE_EXAMPLE = {
  group: [
    `**/${EXAMPLE}`,
    `**/${EXAMPLE}/**`,
    '@exactly-once/tools',
    '@exactly-once/tools/**',
    '**/packages/tools/**',
    '**/tooling/**',
    '**/test/**',
  ],
  message: `The exactly-once folders import nothing of the example (${EXAMPLE}), the tools or the tests.`,
};
// The example uses the mechanism through its public surface only: each package's index and, for the
// runtime, its subpath modules (aws, api, runtime, testing), each a folder's index.ts; never the
// packages' files by a relative path.
const MECHANISM_THROUGH_ITS_INDEX = {
  group: [
    '@exactly-once/runtime/*',
    '@exactly-once/runtime/**/*',
    ...['aws', 'api', 'runtime', 'testing'].map((subpath) => `!@exactly-once/runtime/${subpath}`),
    '@exactly-once/cdk/*',
    '@exactly-once/cdk/**/*',
    '**/packages/**',
  ],
  message:
    "Import the mechanism from its index ('@exactly-once/runtime', '@exactly-once/cdk') or a runtime subpath module ('@exactly-once/runtime/aws', /api, /runtime, /testing), not from a file inside a package.",
};
// A tool takes what it knows of the domain from the domain its entry point hands it (packages/tools/src/load-domain.ts
// loads the example's tooling/<example>/ by the name in package.json), so a fork with another domain edits no tool,
// and the tools and the example's plug-ins (which import the tools' engines) form no import circle.
const DOMAIN_THROUGH_THE_EXAMPLE_MODULE = {
  group: [`**/${EXAMPLE}`, `**/${EXAMPLE}/**`, '**/tooling', '**/tooling/**'],
  message:
    "A tool takes the example's domain from its entry point, which loads it (packages/tools/src/load-domain.ts), not from the example's files.",
};
// Inside the mechanism (packages/runtime/src) layers point one way. Core (the root modules, consumer/,
// outbox/, inbox/, provider/, runtime/: types, ports, retry budget, record work) imports no adapter;
// aws/ (the adapters) implements core's ports; faults/ decorates them for the proof kit; api/ and
// wiring/ compose all of them into handlers. The index files are the public surface over every layer.
const layerBelow = (layer, above) => ({
  // The negation keeps a package that merely ends in a folder's name (@opentelemetry/api) allowed.
  group: [...above.flatMap((folder) => [`**/${folder}`, `**/${folder}/**`]), '!@opentelemetry/*'],
  message: `Layers point one way in packages/runtime/src: ${layer} imports nothing of ${above.join('/, ')}/ (core <- aws <- faults <- api, wiring).`,
});
const MECHANISM_SURFACES = [
  'packages/runtime/src/index.ts',
  'packages/runtime/src/aws/index.ts',
  'packages/runtime/src/testing/**',
];
const restrict = (...patterns) => ({ 'no-restricted-imports': ['error', { patterns }] });

export default tseslint.config(
  // JavaScript files (configs, the local runtime's worker, the Artillery processor) are linted like TypeScript.
  // packages/tools/templates/domain is the skeleton `npm run new:domain` writes, linted where it lands (test/unit/another-domain.test.ts).
  {
    ignores: [
      'node_modules/',
      'cdk.out/',
      '.local/',
      'coverage/',
      'loadtest-results/',
      'bench-results/',
      'packages/tools/templates/',
    ],
  },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': 'off',
    },
  },
  {
    // The tools stay in parts a reader can hold: a job that grows gets a module of its own, not a longer
    // one (comments and blank lines count; test/unit/tool-sizes.test.ts shows both rules bite).
    files: ['packages/tools/src/**/*.{ts,js,cjs,mjs}'],
    rules: {
      'max-lines': ['error', { max: 500, skipBlankLines: false, skipComments: false }],
      'max-lines-per-function': ['error', { max: 100, skipBlankLines: false, skipComments: false }],
    },
  },
  {
    // CommonJS run by node directly (no build step): require() is how they import.
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  // Each file gets exactly one of the rule sets below (a later no-restricted-imports replaces an earlier one).
  {
    files: ['packages/runtime/src/**/*.ts'],
    ignores: [
      'packages/runtime/src/aws/**',
      'packages/runtime/src/faults/**',
      'packages/runtime/src/api/**',
      'packages/runtime/src/wiring/**',
      ...MECHANISM_SURFACES,
    ],
    rules: restrict(NO_SDK, NOTHING_OF_THE_EXAMPLE, layerBelow('core', ['aws', 'faults', 'api', 'wiring'])),
  },
  {
    files: ['packages/runtime/src/aws/**/*.ts'],
    ignores: MECHANISM_SURFACES,
    rules: restrict(NOTHING_OF_THE_EXAMPLE, layerBelow('aws', ['faults', 'api', 'wiring'])),
  },
  {
    files: ['packages/runtime/src/faults/**/*.ts'],
    rules: restrict(NO_SDK, NOTHING_OF_THE_EXAMPLE, layerBelow('faults', ['api', 'wiring'])),
  },
  {
    files: ['packages/runtime/src/api/**/*.ts'],
    rules: restrict(NO_SDK, NOTHING_OF_THE_EXAMPLE, layerBelow('api', ['wiring'])),
  },
  {
    files: ['packages/runtime/src/wiring/**/*.ts', ...MECHANISM_SURFACES],
    rules: restrict(NO_SDK, NOTHING_OF_THE_EXAMPLE),
  },
  {
    files: [`lambdas/${EXAMPLE}/**/*.ts`],
    ignores: [`lambdas/${EXAMPLE}/aws/**`],
    rules: restrict(NO_SDK, MECHANISM_THROUGH_ITS_INDEX),
  },
  { files: [`lambdas/${EXAMPLE}/aws/**/*.ts`], rules: restrict(MECHANISM_THROUGH_ITS_INDEX) },
  // The example's plug-ins for the tools (tooling/<example>/: the proof kit's domain, the simulated
  // domain, the bench) are tool code, not Lambda code: like the tools they drive the mechanism's parts
  // and the SDK directly. Only code that runs in a function lives under lambdas/.
  // The application's own CDK files outside the example's folder (lib/config.ts, the stages) are held the same.
  {
    files: ['bin/**/*.ts', 'lib/*.ts', `lib/${EXAMPLE}/**/*.ts`],
    rules: restrict(NO_HANDLER_MODULE, MECHANISM_THROUGH_ITS_INDEX),
  },
  { files: ['packages/cdk/src/**/*.ts'], rules: restrict(NO_HANDLER_MODULE, NOTHING_OF_THE_EXAMPLE) },
  {
    files: ['packages/tools/src/**/*.ts'],
    rules: restrict(DOMAIN_THROUGH_THE_EXAMPLE_MODULE),
  },
);
