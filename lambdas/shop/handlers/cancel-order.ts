import { makeHandler, partsFromEnv } from '../entry-points/cancel-order';

/** The deployed POST /orders/{orderId}/cancel: its factory on the parts its environment names, built once at cold start. */
export const handler = makeHandler(partsFromEnv());
