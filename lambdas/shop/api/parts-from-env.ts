import { callerRuleFromEnv } from '@exactly-once/runtime/api';
import { dynamoDbDocumentClient, idempotencyStore } from '@exactly-once/runtime/aws';
import { ENV, requireEnv, requireIntEnv } from '@exactly-once/runtime/runtime';
import { DynamoDbOrderRepository } from '../aws/dynamodb-order-repository';
import { DynamoDbEffectsReader } from '../aws/ledgers';
import { SHOP_ENV } from '../env-names';

/**
 * The deployed parts of the API functions, from the environment the stack sets: what the one-line
 * modules in `handlers/` give the factories of `entry-points/`. Each is called once, at cold start,
 * and throws naming the variable when one is missing, so a misconfigured function fails its first
 * invocation rather than answering from a half-built handler. Each function reads only the
 * variables its own stack entry sets (create-order alone has the idempotency table).
 */

/** POST /orders: the Orders table, the idempotency table and its key expiry, the caller rule, the wall clock. */
export function createOrderPartsFromEnv() {
  return {
    orders: new DynamoDbOrderRepository(dynamoDbDocumentClient(), requireEnv(SHOP_ENV.ordersTable)),
    idempotencyStore: idempotencyStore(requireEnv(SHOP_ENV.idempotencyTable)),
    keyExpirySeconds: requireIntEnv(SHOP_ENV.idempotencyKeyExpirySeconds),
    now: () => new Date(),
    callerRule: callerRuleFromEnv(),
  };
}

/** GET and cancel on `/orders/{orderId}`: the Orders table and the caller rule. */
export function orderPartsFromEnv() {
  return {
    orders: new DynamoDbOrderRepository(dynamoDbDocumentClient(), requireEnv(SHOP_ENV.ordersTable)),
    callerRule: callerRuleFromEnv(),
  };
}

/** GET /customers/{customerId}: the order parts, plus the consumers' effects to read points from. */
export function customerReadPartsFromEnv() {
  return { ...orderPartsFromEnv(), ...stockReadPartsFromEnv() };
}

/** GET /inventory/{sku}: the consumers' effects only (a shared read model, no caller rule). */
export function stockReadPartsFromEnv() {
  return { effects: new DynamoDbEffectsReader(dynamoDbDocumentClient(), requireEnv(ENV.effectsTable)) };
}
