import * as fs from 'node:fs';

/**
 * Every infra test file, run as one suite: each file's tests under a describe named for the file.
 * One module registry means aws-cdk-lib loads once and the default stack is synthesized once
 * (test/support/synth.ts caches it), where fourteen registries spent most of their time loading it.
 * `npx jest test/infra/<file>.test.ts` still runs one file alone (jest.config.js).
 */
const files = fs
  .readdirSync(__dirname)
  .filter((file) => file.endsWith('.test.ts'))
  .sort();

for (const file of files)
  describe(file, () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require(`./${file}`);
  });
