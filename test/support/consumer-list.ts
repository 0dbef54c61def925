import { consumerSpec } from '../../lambdas/shop/consumers';
import type { ConsumerSpec } from '@exactly-once/runtime/consumer-spec';

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
