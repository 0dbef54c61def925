import { makeHandler, partsFromEnv } from '../entry-points/get-customer';

/** The deployed GET /customers/{customerId}: its factory on the parts its environment names, built once at cold start. */
export const handler = makeHandler(partsFromEnv());
