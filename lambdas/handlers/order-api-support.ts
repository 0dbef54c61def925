import type { APIGatewayProxyEvent } from 'aws-lambda';
import { dynamoDbDocumentClient } from '../adapters/aws-clients';
import { DynamoDbOrderRepository } from '../adapters/dynamodb-order-repository';
import { requireEnv } from '../shared/config';
import { callerOf, FORBIDDEN, problem, type HttpResponse } from './http';
import { ENV } from '../shared/env-names';

/** The repository for the read/cancel handlers, built once per process. */
export function orderRepositoryFromEnv(): DynamoDbOrderRepository {
  return new DynamoDbOrderRepository(dynamoDbDocumentClient(), requireEnv(ENV.ordersTable));
}

const ORDER_ID = /^ord_[0-9a-f]{32}$/;

/** The `{orderId}` path parameter, or a 400 when it cannot be an order id. */
export function orderIdParam(
  event: APIGatewayProxyEvent,
): { ok: true; orderId: string } | { ok: false; response: HttpResponse } {
  const orderId = event.pathParameters?.orderId;
  if (orderId === undefined || !ORDER_ID.test(orderId)) {
    return {
      ok: false,
      response: problem({
        status: 400,
        title: 'Invalid order id',
        detail: 'orderId must look like ord_ followed by 32 hex digits.',
      }),
    };
  }
  return { ok: true, orderId };
}

/**
 * What GET and cancel on `/orders/{orderId}` start from: the caller (403
 * without one) and the order id (400 when it cannot be one), in that order.
 */
export function orderRequestOf(
  event: APIGatewayProxyEvent,
): { ok: true; caller: string; orderId: string } | { ok: false; response: HttpResponse } {
  const caller = callerOf(event);
  if (caller === undefined) return { ok: false, response: FORBIDDEN };
  const id = orderIdParam(event);
  return id.ok ? { ok: true, caller, orderId: id.orderId } : id;
}
