import { callerRuleFromEnv } from '@exactly-once/runtime/api';
import { dynamoDbDocumentClient, idempotencyStore } from '@exactly-once/runtime/aws';
import { requireEnv, requireIntEnv } from '@exactly-once/runtime/runtime';
import { DynamoDbBookings } from '../aws/booking-repository';

/**
 * POST /bookings' deployed parts, from the environment its stack sets (../../../lib/__example__/bookings-api.ts):
 * what ../handlers/create-booking.ts gives the factory. Read once, at cold start; a missing variable
 * throws, naming it.
 */
export function createBookingPartsFromEnv() {
  return {
    bookings: new DynamoDbBookings(dynamoDbDocumentClient(), requireEnv('BOOKINGS_TABLE_NAME')),
    idempotencyStore: idempotencyStore(requireEnv('IDEMPOTENCY_TABLE_NAME')),
    keyExpirySeconds: requireIntEnv('IDEMPOTENCY_KEY_EXPIRY_SECONDS'),
    now: () => new Date(),
    callerRule: callerRuleFromEnv(),
  };
}
