import { makeHandler, partsFromEnv } from '../entry-points/loyalty-consumer';

/** The deployed loyalty consumer: its factory on the parts its environment names, built once at cold start. */
export const handler = makeHandler(partsFromEnv());
