import type { BasePersistenceLayer } from '@aws-lambda-powertools/idempotency/persistence';
import { idempotentCommand } from '@exactly-once/runtime';
import { callerRuleFromEnv, json, type CallerRule } from '@exactly-once/runtime/api';
import { dynamoDbDocumentClient, idempotencyStore } from '@exactly-once/runtime/aws';
import { metrics, MetricUnit, requireEnv, requireIntEnv } from '@exactly-once/runtime/runtime';
import { DynamoDbOrderRepository } from '../aws/dynamodb-order-repository';
import { parsePlaceOrderBody, type PlaceOrderRequest } from '../domain/order';
import type { OrderRepository } from '../ports/order-repository';
import { IdempotencyKeyReusedError, placeOrder } from '../use-cases/place-order';
import { shopErrorResponse } from '../api/order-request';
import { SHOP_ENV } from '../env-names';

/**
 * POST /orders: the HTTP idempotency contract (docs/http-api.md, the mechanism's `idempotentCommand`)
 * around one use case, placeOrder. A key the order itself shows reused (its record gone, the order it
 * made of another body) is 422 too.
 *
 * `makeHandler` is the whole function on given parts: the deployed binding
 * (handlers/create-order.ts) gives it `partsFromEnv()`, the simulation one
 * simulated invocation's (its clients and its virtual clock).
 */
export interface Parts {
  orders: OrderRepository;
  /** Powertools' persistence layer for the idempotency records; one per handler (see idempotency-store). */
  idempotencyStore: BasePersistenceLayer;
  keyExpirySeconds: number;
  now: () => Date;
  /** Which role sessions are people (packages/runtime/src/api/caller.ts); the default rule when not given. */
  callerRule?: CallerRule;
}

const ROUTE = 'POST /orders';

export function makeHandler(parts: Parts) {
  return idempotentCommand<PlaceOrderRequest>({
    route: ROUTE,
    keyPrefix: 'create-order',
    parseBody: parsePlaceOrderBody,
    invalidBodyTitle: 'Invalid order',
    run: async (input) => {
      const order = await placeOrder(parts.orders, { ...input, now: parts.now() });
      metrics.addMetric('OrderPlaced', MetricUnit.Count, 1);
      return json(201, order, { Location: `/orders/${order.orderId}` });
    },
    persistenceStore: parts.idempotencyStore,
    keyExpirySeconds: parts.keyExpirySeconds,
    callerRule: parts.callerRule,
    isKeyReused: (error) => error instanceof IdempotencyKeyReusedError,
    errorResponse: shopErrorResponse,
    onReplay: () => metrics.addMetric('ReplayServed', MetricUnit.Count, 1),
  });
}

/** The deployed parts, from the environment the stack sets: read once, at cold start; a missing variable throws, naming it. */
export function partsFromEnv(): Parts {
  return {
    orders: new DynamoDbOrderRepository(dynamoDbDocumentClient(), requireEnv(SHOP_ENV.ordersTable)),
    idempotencyStore: idempotencyStore(requireEnv(SHOP_ENV.idempotencyTable)),
    keyExpirySeconds: requireIntEnv(SHOP_ENV.idempotencyKeyExpirySeconds),
    now: () => new Date(),
    callerRule: callerRuleFromEnv(),
  };
}
