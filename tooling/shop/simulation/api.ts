import type { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { BasePersistenceLayerOptions } from '@aws-lambda-powertools/idempotency/types';
import type { AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { DynamoDbOrderRepository } from '../../../lambdas/shop/aws/dynamodb-order-repository';
import { idempotencyStore } from '../../../lambdas/exactly-once/aws';
import type { PlaceOrderRequest } from '../../../lambdas/shop/domain/order';
import { makeCreateOrderHandler } from '../../../lambdas/shop/entry-points/create-order';
import { apiEvent } from '../../../test/support/api-events';
import type { MemoryDynamoDb } from '../../../tools/simulation/memory-dynamodb';
import type { Invocation } from '../../../tools/simulation/world/invocation';
import { lowLevelClient } from '../../../tools/simulation/low-level-client';
import { IDEMPOTENCY_TABLE, ORDERS_TABLE } from './tables';

/**
 * POST /orders in the simulation: the deployed create-order entry point
 * (`makeCreateOrderHandler`) with Powertools' idempotency layer and its real
 * DynamoDB persistence layer, on one simulated request's clients. The
 * persistence layer talks to the in-memory DynamoDB through the low-level
 * client (PutItem with its conditions and ALL_OLD, GetItem, UpdateItem,
 * DeleteItem); Powertools reads the time from Date.now, which the world points
 * at its virtual clock while a schedule runs.
 */

/** The create-order function's timeout (FunctionWithDefaults' default): the in-progress record lives this long. */
export const CREATE_ORDER_TIMEOUT_SECONDS = 10;
/** IDEMPOTENCY_KEY_EXPIRY (lib/shop/orders-api.ts): how long a completed answer is replayed. */
export const IDEMPOTENCY_KEY_EXPIRY_SECONDS = 24 * 3600;

/**
 * The API's idempotency layer, or one of two test-only breaks of it:
 * - 'no-payload-validation': the layer without `payloadValidationJmesPath`, so
 *   a key reused with another body is answered with the first body's order;
 * - 'bypassed': Powertools' own switch (POWERTOOLS_IDEMPOTENCY_DISABLED) on, so
 *   every request runs the use case (a replay after a cancel answers with the
 *   cancelled order instead of the first answer).
 */
export type ApiIdempotency = 'powertools' | 'no-payload-validation' | 'bypassed';

export function createOrderHandler(
  invocation: Invocation,
  db: MemoryDynamoDb,
  idempotency: ApiIdempotency,
  now: () => Date,
): ReturnType<typeof makeCreateOrderHandler> {
  const store = idempotencyStore(IDEMPOTENCY_TABLE, invocationClient(invocation, db));
  if (idempotency === 'no-payload-validation') withoutPayloadValidation(store);
  return makeCreateOrderHandler({
    orders: new DynamoDbOrderRepository(invocation.documents, ORDERS_TABLE),
    idempotencyStore: store,
    keyExpirySeconds: IDEMPOTENCY_KEY_EXPIRY_SECONDS,
    now,
  });
}

/** The request API Gateway hands the function: IAM-signed by `userArn`, the key in its header, the body as sent. */
export function placeOrderEvent(userArn: string, key: string, request: PlaceOrderRequest): APIGatewayProxyEvent {
  return apiEvent({
    method: 'POST',
    path: '/orders',
    caller: userArn,
    headers: { 'Content-Type': 'application/json', 'Idempotency-Key': key },
    body: JSON.stringify(request),
  });
}

/** The break: the store configured as if the config had no payloadValidationJmesPath. */
function withoutPayloadValidation(store: DynamoDBPersistenceLayer): void {
  const configure = store.configure.bind(store);
  store.configure = (options?: BasePersistenceLayerOptions) =>
    configure({
      ...options,
      config: Object.create(options?.config ?? null, { payloadValidationJmesPath: { value: undefined } }),
    });
}

/**
 * The low-level client of one simulated request: each command goes through
 * the invocation's await point (latency, crash before or after it lands) to
 * the in-memory DynamoDB.
 */
function invocationClient(invocation: Invocation, db: MemoryDynamoDb): DynamoDBClient {
  return lowLevelClient((command) => {
    const key = (command.input.Key ?? command.input.Item) as Record<string, AttributeValue> | undefined;
    const label = `${command.constructor.name.replace('Command', '')} ${key?.id?.S ?? ''}`;
    return invocation.io(label, () => db.execute(command));
  });
}
