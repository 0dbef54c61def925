import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { domainTemplate } from '@exactly-once/tools/scaffolder/domain-template';
import { copyWithNewDomain, NEW_DOMAIN, runInCopy } from './repo-copy';

const REPO = resolve(__dirname, '../..');

/**
 * The another-domain tests' copy of the repository, made before a test file's tests and removed after:
 * `npm run new:domain bookings` run in a copy (repo-copy.ts), so the shop, its runtime code, its stack
 * and every test that reaches it are gone and the skeleton domain (packages/tools/templates/domain) is in
 * their place under another folder name. Each of the another-domain files makes its own, so they run
 * side by side on the long project's workers (a copy takes seconds; what runs in it takes minutes).
 */
export function useAnotherDomainCopy() {
  let copy: string | undefined;
  const template = domainTemplate(NEW_DOMAIN);

  beforeAll(() => {
    copy = copyWithNewDomain(REPO, NEW_DOMAIN);
  });

  afterAll(() => {
    if (copy !== undefined) rmSync(copy, { recursive: true, force: true });
  });

  return {
    /** The new domain's folder name. */
    name: NEW_DOMAIN,
    /** The skeleton's files, as new:domain wrote them (paths relative to the root). */
    written: template.map(({ path }) => path),
    /** The skeleton's files and texts. */
    template,
    /** The copy's folder (after beforeAll). */
    copy: () => copy!,
    /** A tool of node_modules/.bin, run in the copy. */
    run: (tool: string, args: string[]) => runInCopy(copy!, tool, args),
  };
}
