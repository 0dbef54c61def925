import { makeHandler, partsFromEnv } from '../entry-points/rooms-consumer';

/** The deployed rooms consumer: its factory on the parts its environment names, built once at cold start. */
export const handler = makeHandler(partsFromEnv());
