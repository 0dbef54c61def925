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
const PACKAGE_CORES = '^packages/(runtime/src|cdk/src|tools/src)/';
// The simulation engine's World and the parts it hands itself to (harnesses, operator, faults, audit): their
// type-only circles through world.ts are left out until the World's surface is a type of its own.
const WORLD = '^packages/tools/src/simulation/world/world\\.ts$';
// The tools' modules that run a command: they alone load the domain (load-domain.ts) and hand it down.
const ENTRY_POINTS = `^packages/tools/src/(${[
  'local-runtime/start',
  'proof-kit/cli',
  'dlq/cli',
  'bench/run',
  'simulation/cli',
  'scaffolder/new-consumer',
  'scaffolder/new-domain',
].join('|')})\\.ts$`;

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
        'In the packages (packages/runtime/src, packages/cdk/src, packages/tools/src) no circle at all, type-only ' +
        "imports included: two modules that need each other's types share a fact that belongs in a third module " +
        'both import, and the next value import along the circle makes it load half-initialised. Circles through ' +
        "the simulation's World (simulation/world/world.ts) are left out: its parts are handed the World itself.",
      from: { path: PACKAGE_CORES },
      to: { circular: true, viaOnly: { pathNot: WORLD } },
    },
    {
      name: 'tools-never-import-the-example',
      severity: 'error',
      comment:
        "The tools load the example's plug-ins by the name in package.json (packages/tools/src/load-domain.ts), so a fork " +
        'replaces the example without editing a tool, and the plug-ins may import the tools without a circle.',
      from: { path: '^packages/tools/src/' },
      to: { path: THE_EXAMPLE },
    },
    {
      name: 'only-entry-points-load-the-domain',
      severity: 'error',
      comment:
        "Each command's entry point loads the domain once (packages/tools/src/load-domain.ts) and hands it to the " +
        'engines: an engine that loaded it itself would be a locator again, reading whatever the configuration ' +
        'names instead of the domain it was given (a test could no longer hand it the probe tooling).',
      from: { path: '^packages/tools/src/', pathNot: [ENTRY_POINTS, '^packages/tools/src/load-domain\\.ts$'] },
      to: { path: '^packages/tools/src/load-domain\\.ts$' },
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
