import type { ApiIdempotency } from '@exactly-once/tools/simulation/world/api';
import { simulatedIdempotencyStore } from '@exactly-once/tools/simulation/world/api';
import type { MemoryDynamoDb } from '@exactly-once/tools/simulation/memory-dynamodb';
import type { Invocation } from '@exactly-once/tools/simulation/world/invocation';
import { DynamoDbOrderRepository } from '../../../lambdas/shop/aws/dynamodb-order-repository';
import { makeHandler as makeCreateOrderHandler } from '../../../lambdas/shop/entry-points/create-order';

/** POST /orders in the simulation: the create-order factory (the deployed function's code) on one simulated request's clients. */

/** The shop's table: its orders and their outbox items. */
export const ORDERS_TABLE = 'Orders';
/** The create-order function's timeout (FunctionWithDefaults' default): the in-progress record lives this long. */
export const CREATE_ORDER_TIMEOUT_SECONDS = 10;
/** IDEMPOTENCY_KEY_EXPIRY (lib/shop/storage.ts): how long a completed answer is replayed. */
export const IDEMPOTENCY_KEY_EXPIRY_SECONDS = 24 * 3600;

export function createOrderHandler(
  invocation: Invocation,
  db: MemoryDynamoDb,
  idempotency: ApiIdempotency,
  now: () => Date,
): ReturnType<typeof makeCreateOrderHandler> {
  return makeCreateOrderHandler({
    orders: new DynamoDbOrderRepository(invocation.documents, ORDERS_TABLE),
    idempotencyStore: simulatedIdempotencyStore(invocation, db, idempotency),
    keyExpirySeconds: IDEMPOTENCY_KEY_EXPIRY_SECONDS,
    now,
  });
}
