import { makeHandler, partsFromEnv } from '../entry-points/relay-handler';

/** The deployed outbox relay: its factory on the parts its environment names, built once at cold start. */
export const handler = makeHandler(partsFromEnv());
