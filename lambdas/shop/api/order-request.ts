import type { APIGatewayProxyEvent } from 'aws-lambda';
import {
  callerOf,
  FORBIDDEN,
  problem,
  unexpectedErrorResponse,
  type CallerRule,
  type HttpResponse,
} from '@exactly-once/runtime/api';
import { dynamoDbDocumentClient } from '@exactly-once/runtime/aws';
import { requireEnv } from '@exactly-once/runtime/runtime';
import { DynamoDbOrderRepository } from '../aws/dynamodb-order-repository';
import { SHOP_ENV } from '../env-names';

/** The repository for the read/cancel handlers, built once per process. */
export function orderRepositoryFromEnv(): DynamoDbOrderRepository {
  return new DynamoDbOrderRepository(dynamoDbDocumentClient(), requireEnv(SHOP_ENV.ordersTable));
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
 * What GET and cancel on `/orders/{orderId}` start from: the caller under
 * `rule` (403 without one) and the order id (400 when it cannot be one), in
 * that order.
 */
export function orderRequestOf(
  event: APIGatewayProxyEvent,
  rule: CallerRule,
): { ok: true; caller: string; orderId: string } | { ok: false; response: HttpResponse } {
  const caller = callerOf(event, rule);
  if (caller === undefined) return { ok: false, response: FORBIDDEN };
  const id = orderIdParam(event);
  return id.ok ? { ok: true, caller, orderId: id.orderId } : id;
}

/** What a 503 of the shop's API says about retrying (docs/http-api.md). */
const RETRY_ADVICE =
  'Retrying is safe: a POST /orders with the same Idempotency-Key returns the same order and never places a second one; ' +
  'a cancel or a read can be repeated as is.';

/** The mechanism's last-resort mapping (503 for a dependency, 500 for a bug) with the shop's retry advice. */
export function shopErrorResponse(error: unknown): HttpResponse {
  return unexpectedErrorResponse(error, RETRY_ADVICE);
}
