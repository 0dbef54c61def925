/**
 * The mechanism for tests and simulations (`exactly-once/testing`): a consumer's wiring built on clients,
 * a clock and providers of the test's own, and the configuration it reads, where a deployed consumer
 * uses `deployedConsumerWiring`.
 *
 * @example A consumer's handler on an emulator's clients
 * ```ts
 * import { consumerConfigFromEnv, consumerWiring } from '@exactly-once/runtime/testing';
 *
 * const wiring = consumerWiring(consumerConfigFromEnv({ consumer: 'loyalty', fifo: false }), { documents, sqs });
 * const handler = makeHandler(wiring);
 * ```
 */

export {
  consumerConfigFromEnv,
  consumerWiring,
  type ConsumerConfig,
  type ConsumerDependencies,
  type ProviderConfig,
} from '../wiring/consumer-wiring';
export { type QueueConsumerHandler } from '../consumer/queue-consumer';
export type { EntityEffectLedger, ProviderCallLease } from '../inbox/ports';
export { lambdaContext } from './lambda-context';
export { apiEvent } from './api-event';
