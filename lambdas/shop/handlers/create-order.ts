import { makeHandler, partsFromEnv } from '../entry-points/create-order';

/** The deployed POST /orders: its factory on the parts its environment names, built once at cold start. */
export const handler = makeHandler(partsFromEnv());
