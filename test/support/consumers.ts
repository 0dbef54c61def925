import { loadWithMockedSdk } from './mocked-sdk';
import type { ConsumerHarness as Harness } from './neutral-consumers';

export {
  deadLettered,
  deliver,
  failedIds,
  HORIZON_FOR_TESTS,
  sqsMessage,
  visibilityChanges,
} from './neutral-consumers';

/**
 * The shop's two SQS consumers with the SDK mocked; records, delivery and what the consumers did with
 * them are the neutral harness's (neutral-consumers.ts).
 */
export type ConsumerName = 'fulfilment' | 'loyalty';
export type ConsumerHarness = Harness<ConsumerName>;

/** Loads one consumer in its own module registry with `env` set (see loadWithMockedSdk). */
export async function loadConsumer(name: ConsumerName, env: Record<string, string>): Promise<ConsumerHarness> {
  const loaded = await loadWithMockedSdk<ConsumerHarness['handler']>(env, () =>
    name === 'fulfilment'
      ? import('../../lambdas/shop/handlers/fulfilment-consumer')
      : import('../../lambdas/shop/handlers/loyalty-consumer'),
  );
  return { ...loaded, name, fifo: name === 'fulfilment' };
}
