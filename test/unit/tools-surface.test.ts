import * as path from 'node:path';
import { surfaceReader } from '../exactly-once/surface-docs';

/**
 * The tools' root (`@exactly-once/tools`, packages/tools/src/index.ts) is what an application's plug-ins
 * for the tools write against: at most 12 names, each with a doc comment carrying an `@example`. Apart
 * from the mechanism's surfaces (public-surface.test.ts), which are checked with the tools deleted.
 */
const ROOT = path.join(__dirname, '..', '..');
const { exportsOf, undocumented } = surfaceReader(ROOT, { '@exactly-once/tools': 'packages/tools/src/index.ts' });

test('the tools root exports at most 12 names, each documented with an @example', () => {
  // Act
  const names = exportsOf('@exactly-once/tools').map((symbol) => symbol.name);

  // Assert
  expect(names.length).toBeGreaterThan(0);
  expect(names.length).toBeLessThanOrEqual(12);
  expect(undocumented('@exactly-once/tools')).toEqual([]);
});
