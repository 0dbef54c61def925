import { makeHandler, partsFromEnv } from '../entry-points/create-booking';

/** The deployed POST /bookings: its factory on the parts its environment names, built once at cold start. */
export const handler = makeHandler(partsFromEnv());
