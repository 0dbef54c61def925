import { makeHandler, partsFromEnv } from '../entry-points/get-inventory';

/** The deployed GET /inventory/{sku}: its factory on the parts its environment names, built once at cold start. */
export const handler = makeHandler(partsFromEnv());
