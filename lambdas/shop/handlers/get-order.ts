import { makeHandler, partsFromEnv } from '../entry-points/get-order';

/** The deployed GET /orders/{orderId}: its factory on the parts its environment names, built once at cold start. */
export const handler = makeHandler(partsFromEnv());
