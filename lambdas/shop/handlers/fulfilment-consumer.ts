import { makeHandler, partsFromEnv } from '../entry-points/fulfilment-consumer';

/** The deployed fulfilment consumer: its factory on the parts its environment names, built once at cold start. */
export const handler = makeHandler(partsFromEnv());
