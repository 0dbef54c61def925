// The import graph's rules (npm run lint runs them; test/unit/import-graph.test.ts shows each one biting).
// Type-only imports are left out of the circle rule: they vanish at compile time and load nothing.
const { exactlyOnce } = require('./package.json');

const EXAMPLE = exactlyOnce.example;
const THE_EXAMPLE = `^(lambdas|lib|tooling)/${EXAMPLE}/`;

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'Modules that load each other start half-initialised (an import reads undefined). A circle through ' +
        'the tools and the example also means neither can be replaced without the other.',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'tools-never-import-the-example',
      severity: 'error',
      comment:
        "The tools load the example's plug-ins by the name in package.json (tools/example.ts), so a fork " +
        'replaces the example without editing a tool, and the plug-ins may import the tools without a circle.',
      from: { path: '^tools/' },
      to: { path: THE_EXAMPLE },
    },
    {
      name: 'mechanism-imports-nothing-outside-it',
      severity: 'error',
      comment: 'The mechanism is a library: the example, the tools and the tests use it, never the reverse.',
      from: { path: '^(lambdas|lib)/exactly-once/' },
      to: { path: `^(tools|tooling|test|bin)/|${THE_EXAMPLE}` },
    },
  ],
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(test/fixtures|cdk\\.out)/' },
  },
};
