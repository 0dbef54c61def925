import { exampleDomain } from './example-domain';

/**
 * A name for a consumer a test makes up, that no consumer on `taken` (the example's list unless given)
 * has: `base` if free, else `base-2`, `base-3`, ... Otherwise a consumer named like it on the list
 * (`npm run new:consumer -- audit`) makes the test's list refuse the name as used twice.
 */
export function unusedConsumerName(
  base: string,
  taken: readonly { name: string }[] = exampleDomain().consumers,
): string {
  const names = new Set(taken.map((c) => c.name));
  let name = base;
  for (let n = 2; names.has(name); n += 1) name = `${base}-${n}`;
  return name;
}
