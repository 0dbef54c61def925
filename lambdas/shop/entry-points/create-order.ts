import { createHash } from 'node:crypto';
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import type { BasePersistenceLayer } from '@aws-lambda-powertools/idempotency/persistence';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import {
  callerOf,
  canonicalJson,
  DEFAULT_CALLER_RULE,
  dynamoDbDocumentClient,
  flushMetrics,
  FORBIDDEN,
  headerValues,
  json,
  logger,
  metrics,
  MetricUnit,
  parseIdempotencyKey,
  problem,
  requireEnv,
  requireIntEnv,
  type CallerRule,
  type HttpResponse,
} from '../../exactly-once';
import { DynamoDbOrderRepository } from '../aws/dynamodb-order-repository';
import { idempotencyStore } from '../aws/idempotency-store';
import { parsePlaceOrderBody, type PlaceOrderRequest } from '../domain/order';
import type { OrderRepository } from '../ports/order-repository';
import { IdempotencyKeyReusedError, placeOrder } from '../use-cases/place-order';
import { callerRuleFromEnv, shopErrorResponse } from '../api/order-request';
import { SHOP_ENV } from '../env-names';

/**
 * POST /orders: the HTTP idempotency contract (docs/http-api.md) around one use case.
 *
 * Order of work matters: the key and body are validated *before* the
 * idempotent section, so a rejected request stores nothing and a corrected
 * request with the same key is accepted.
 *
 * `makeCreateOrderHandler` is the whole function on given parts: the deployed
 * handler below builds them from its environment, the simulation from one
 * simulated invocation's (its clients and its virtual clock).
 */
export interface CreateOrderParts {
  orders: OrderRepository;
  /** Powertools' persistence layer for the idempotency records; one per handler (see idempotency-store). */
  idempotencyStore: BasePersistenceLayer;
  keyExpirySeconds: number;
  now: () => Date;
  /** Which role sessions are people (lambdas/exactly-once/api/caller.ts); the default rule when not given. */
  callerRule?: CallerRule;
}

const ROUTE = 'POST /orders';

/** What the idempotent section sees; frozen because Powertools hashes it again on completion. */
interface IdempotentPlaceOrder {
  scope: string;
  fingerprint: string;
  caller: string;
  idempotencyKey: string;
  request: PlaceOrderRequest;
}

export function makeCreateOrderHandler(parts: CreateOrderParts) {
  const idempotencyConfig = new IdempotencyConfig({
    eventKeyJmesPath: 'scope',
    payloadValidationJmesPath: 'fingerprint',
    expiresAfterSeconds: parts.keyExpirySeconds,
    // A stored success served again: same status and body, plus the replay header.
    responseHook: (response) => {
      metrics.addMetric('ReplayServed', MetricUnit.Count, 1);
      const stored = response as unknown as HttpResponse;
      return { ...stored, headers: { ...stored.headers, 'Idempotent-Replayed': 'true' } };
    },
  });

  const placeOrderOnce = makeIdempotent(
    async (input: IdempotentPlaceOrder): Promise<HttpResponse> => {
      const order = await placeOrder(parts.orders, { ...input, now: parts.now() });
      metrics.addMetric('OrderPlaced', MetricUnit.Count, 1);
      return json(201, order, { Location: `/orders/${order.orderId}` });
    },
    { persistenceStore: parts.idempotencyStore, config: idempotencyConfig, keyPrefix: 'create-order' },
  );

  return async (event: APIGatewayProxyEvent, context: Context): Promise<HttpResponse> => {
    logger.addContext(context);
    // Without the context the in-progress lock never expires after a crash.
    idempotencyConfig.registerLambdaContext(context);
    try {
      return await handle(event, placeOrderOnce, parts.callerRule ?? DEFAULT_CALLER_RULE);
    } finally {
      flushMetrics();
    }
  };
}

const config = {
  ordersTable: requireEnv(SHOP_ENV.ordersTable),
  idempotencyTable: requireEnv(SHOP_ENV.idempotencyTable),
  keyExpirySeconds: requireIntEnv(SHOP_ENV.idempotencyKeyExpirySeconds),
  callerRule: callerRuleFromEnv(),
};

export const handler = makeCreateOrderHandler({
  orders: new DynamoDbOrderRepository(dynamoDbDocumentClient(), config.ordersTable),
  idempotencyStore: idempotencyStore(config.idempotencyTable),
  keyExpirySeconds: config.keyExpirySeconds,
  now: () => new Date(),
  callerRule: config.callerRule,
});

async function handle(
  event: APIGatewayProxyEvent,
  placeOrderOnce: (input: IdempotentPlaceOrder) => Promise<HttpResponse>,
  callerRule: CallerRule,
): Promise<HttpResponse> {
  const caller = callerOf(event, callerRule);
  if (caller === undefined) return FORBIDDEN;

  const key = parseIdempotencyKey(headerValues(event, 'Idempotency-Key'));
  if (!key.ok) return problem({ status: 400, title: 'Invalid Idempotency-Key', detail: key.reason });

  const body = parsePlaceOrderBody(event.body);
  if (!body.ok) {
    return problem({
      status: 400,
      title: 'Invalid order',
      detail: 'The request body failed validation; nothing was stored.',
      errors: body.errors,
    });
  }

  const fingerprint = createHash('sha256')
    .update(canonicalJson({ route: ROUTE, body: body.value }))
    .digest('hex');
  const input: IdempotentPlaceOrder = deepFreeze({
    // The caller is part of the key: the same key from two callers is two requests.
    scope: `${caller}\n${key.key}`,
    fingerprint,
    caller,
    idempotencyKey: key.key,
    request: body.value,
  });

  try {
    return await placeOrderOnce(input);
  } catch (error) {
    return mapError(error);
  }
}

function mapError(error: unknown): HttpResponse {
  const name = error instanceof Error ? error.name : '';
  if (name === 'IdempotencyValidationError' || error instanceof IdempotencyKeyReusedError) {
    return problem({
      status: 422,
      title: 'Idempotency-Key reused',
      detail: 'This Idempotency-Key was already used with a different request payload.',
    });
  }
  if (name === 'IdempotencyAlreadyInProgressError') {
    return problem(
      {
        status: 409,
        title: 'Request in progress',
        detail: 'A request with this Idempotency-Key is still being processed.',
      },
      { 'Retry-After': '1' },
    );
  }
  return shopErrorResponse(error);
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
