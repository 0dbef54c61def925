import { deployedConsumerWiring } from '@exactly-once/runtime';
import { consumerSpec } from '../consumers';
import { makeHandler } from '../entry-points/rooms-consumer';

/** The deployed rooms consumer: its factory on the wiring its environment names, built once at cold start. */
export const handler = makeHandler(deployedConsumerWiring(consumerSpec('rooms')));
