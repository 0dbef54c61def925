// The import graph's rules (npm run lint runs them; test/unit/import-graph.test.ts shows each one biting).
// Type-only imports are left out of the circle rule (no-circular) across the repository: they vanish at compile
// time and load nothing. In the packages' cores (no-circular-types-in-the-packages) they count too.
const { exactlyOnce } = require('./package.json');

const EXAMPLE = exactlyOnce.example;
const THE_EXAMPLE = `^(lambdas|lib|tooling)/${EXAMPLE}/`;

// Inside packages/runtime/src layers point one way, as the ESLint rules (eslint.config.mjs) say:
// core (the root modules, consumer/, outbox/, inbox/, provider/, runtime/, trace/) <- aws/ (the adapters)
// <- faults/ (decorators for the proof kit) <- api/ <- wiring/. The index files (the root's, aws/index.ts)
// and testing/ are the public surface over every layer, so they may import any of them.
const MECHANISM = '^packages/runtime/src/';
const LAYERS = ['aws', 'faults', 'api', 'wiring'];
const SURFACES = `${MECHANISM}(index\\.ts$|aws/index\\.ts$|testing/)`;
/** `layer` (the files `from` names) imports nothing of the layers above it; type-only imports count too, as in ESLint. */
const layerBelow = (layer, from, above) => ({
  name: `layers-point-one-way-${layer}`,
  severity: 'error',
  comment:
    `Layers point one way in packages/runtime/src (core <- aws <- faults <- api <- wiring): ${layer} imports ` +
    `nothing of ${above.join('/, ')}/. An import back would let a port depend on its adapter, or the ` +
    'adapters on the fault decorators that deployable bundles drop.',
  from: { ...from, pathNot: [SURFACES, ...(from.pathNot ?? [])] },
  to: { path: `${MECHANISM}(${above.join('|')})/` },
});

// Where a circle of type-only imports is refused too.
const PACKAGE_CORES = '^packages/(runtime/src|cdk/src|tools/src/proof-kit)/';

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
      name: 'no-circular-types-in-the-packages',
      severity: 'error',
      comment:
        'In the mechanism (packages/runtime/src, packages/cdk/src) and the proof kit no circle at all, type-only ' +
        "imports included: two modules that need each other's types share a fact that belongs in a third module " +
        'both import, and the next value import along the circle makes it load half-initialised. Circles through ' +
        "packages/tools/src/example.ts (the tools' locator of the example's plug-ins) are left out: breaking them " +
        'is a refactor of its own, passing the domain down from the entry points.',
      from: { path: PACKAGE_CORES },
      to: { circular: true, viaOnly: { pathNot: '^packages/tools/src/example\\.ts$' } },
    },
    {
      name: 'tools-never-import-the-example',
      severity: 'error',
      comment:
        "The tools load the example's plug-ins by the name in package.json (packages/tools/src/example.ts), so a fork " +
        'replaces the example without editing a tool, and the plug-ins may import the tools without a circle.',
      from: { path: '^packages/tools/src/' },
      to: { path: THE_EXAMPLE },
    },
    {
      name: 'mechanism-imports-nothing-outside-it',
      severity: 'error',
      comment: 'The mechanism is a library: the example, the tools and the tests use it, never the reverse.',
      from: { path: '^packages/(runtime|cdk)/' },
      to: { path: `^(packages/tools|tooling|test|bin)/|${THE_EXAMPLE}` },
    },
    layerBelow('core', { path: MECHANISM, pathNot: [`${MECHANISM}(${LAYERS.join('|')})/`] }, LAYERS),
    layerBelow('aws', { path: `${MECHANISM}aws/` }, LAYERS.slice(1)),
    layerBelow('faults', { path: `${MECHANISM}faults/` }, LAYERS.slice(2)),
    layerBelow('api', { path: `${MECHANISM}api/` }, LAYERS.slice(3)),
  ],
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(packages/tools/templates|cdk\\.out)/' },
    // The packages are found through their node_modules links and checked as the files they are.
    preserveSymlinks: false,
  },
};
