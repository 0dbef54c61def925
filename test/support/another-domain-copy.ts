import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { domainTemplate } from '@exactly-once/tools/scaffolder/domain-template';
import { exampleName, exampleReach } from './example-reach';
import { runInCopy, linkNodeModules } from './repo-copy';

const REPO = resolve(__dirname, '../..');
/** The example's folder (lambdas/<it>, lib/<it>, tooling/<it>), as package.json names it; the bookings take its place. */
const EXAMPLE = exampleName(REPO);

const tracked = (): string[] =>
  execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: REPO, encoding: 'utf8' })
    .split('\0')
    .filter((path) => path !== '' && existsSync(join(REPO, path)));

const isExample = (path: string) =>
  path.startsWith(`lambdas/${EXAMPLE}/`) ||
  path.startsWith(`tooling/${EXAMPLE}/`) ||
  path.startsWith(`lib/${EXAMPLE}/`);

/** The tests that reach the shop, through their own imports or a test-support file's: the example's tests. */
function examplesTests(files: readonly string[]): Set<string> {
  const reaches = exampleReach(REPO);
  return new Set(files.filter((file) => file.startsWith('test/') && reaches(file)));
}

/**
 * The another-domain tests' copy of the repository, made before a test file's tests and removed after:
 * without the shop (its runtime code, its stack, and every test that reaches it), with the skeleton
 * domain of packages/tools/templates/domain (the bookings) in its place, node_modules linked to this one's. Each of the
 * another-domain files makes its own, so the three run side by side on the long project's workers
 * (a copy takes seconds; what runs in it takes minutes). `renderGuarantees`: render the guarantee pages
 * in the copy first, as a fork does after replacing the example (the guarantees page test needs it).
 * `written`: the skeleton's paths; `run`: a tool of node_modules/.bin in the copy.
 */
export function useAnotherDomainCopy(options: { renderGuarantees: boolean }) {
  let copy: string | undefined;
  const template = domainTemplate(EXAMPLE);
  const written = template.map(({ path }) => path);

  beforeAll(() => {
    copy = mkdtempSync(join(tmpdir(), 'another-domain-'));
    const files = tracked();
    const dropped = examplesTests(files);
    for (const path of files) {
      if (isExample(path) || dropped.has(path)) continue;
      mkdirSync(dirname(join(copy, path)), { recursive: true });
      cpSync(join(REPO, path), join(copy, path));
    }
    for (const { path, text } of template) {
      mkdirSync(dirname(join(copy, path)), { recursive: true });
      writeFileSync(join(copy, path), text);
    }
    linkNodeModules(REPO, copy);
    if (!options.renderGuarantees) return;
    // The guarantee pages are rendered again, from the mechanism's registry and the new example's (the
    // bookings have none), so the page tests hold there.
    const render = runInCopy(copy, 'tsx', ['test/guarantees/render.ts']);
    if (render.status !== 0) throw new Error(`rendering the guarantee pages in the copy failed:\n${render.output}`);
  });

  afterAll(() => {
    if (copy !== undefined) rmSync(copy, { recursive: true, force: true });
  });

  return {
    /** The skeleton's files, as written into the copy. */
    written,
    /** The skeleton's files and texts. */
    template,
    /** The copy's folder (after beforeAll). */
    copy: () => copy!,
    run: (tool: string, args: string[]) => runInCopy(copy!, tool, args),
  };
}
