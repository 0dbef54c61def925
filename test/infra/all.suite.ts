import * as fs from 'node:fs';
import * as path from 'node:path';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const SYNTHESIZING_UNIT_FILES = require('../support/synthesizing-unit-files.cjs') as string[];

const ROOT = path.resolve(__dirname, '..', '..');

/**
 * Every infra test file, run as one suite: each file's tests under a describe named for the file.
 * One module registry means aws-cdk-lib loads once and the default stack is synthesized once
 * (test/support/synth.ts caches it), where fourteen registries spent most of their time loading it.
 * `npx jest test/infra/<file>.test.ts` still runs one file alone (jest.config.js).
 */
const files = [
  ...fs
    .readdirSync(__dirname)
    .filter((file) => file.endsWith('.test.ts'))
    .sort(),
  // Unit-tier files that synthesize a stack (test/support/synthesizing-unit-files.cjs): here aws-cdk-lib is
  // already loaded and the shop's and the probe's stacks already built. Where a copy of the repository
  // left one out (the another-domain copy has no shop), it is not required.
  ...SYNTHESIZING_UNIT_FILES.map((file) => path.relative(__dirname, path.join(ROOT, file))).filter((file) =>
    fs.existsSync(path.join(__dirname, file)),
  ),
];

for (const file of files)
  describe(file, () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require(file.startsWith('.') ? file : `./${file}`);
  });
