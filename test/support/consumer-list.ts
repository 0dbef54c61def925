import { CONSUMERS, consumerSpec } from '../../lambdas/shop/consumers';
import type { ConsumerSpec } from '../../lambdas/exactly-once/consumer-spec';

/**
 * The two consumers the repository ships with. Fixtures written for their
 * effects (fulfilment's reserved stock and PICK / CANCEL_PICK, loyalty's
 * points) run the verification with these only: the list may hold more
 * (`npm run new:consumer`), whose claims and calls such fixtures do not have.
 */
export const EXAMPLE_CONSUMERS: readonly ConsumerSpec[] = Object.freeze([
  consumerSpec('fulfilment'),
  consumerSpec('loyalty'),
]);

/**
 * A name for a consumer a test makes up, that no consumer on `taken` has:
 * `base` if free, else `base-2`, `base-3`, ... Otherwise a consumer named
 * like it on the list (`npm run new:consumer -- audit`) makes the test's list
 * refuse the name as used twice.
 */
export function unusedConsumerName(base: string, taken: readonly { name: string }[] = CONSUMERS): string {
  const names = new Set(taken.map((c) => c.name));
  let name = base;
  for (let n = 2; names.has(name); n += 1) name = `${base}-${n}`;
  return name;
}
