import { makeHandler, partsFromEnv } from '../entry-points/sweeper-handler';

/** The deployed outbox sweeper: its factory on the parts its environment names, built once at cold start. */
export const handler = makeHandler(partsFromEnv());
