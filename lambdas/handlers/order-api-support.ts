import type { APIGatewayProxyEvent } from 'aws-lambda';
import { dynamoDbDocumentClient } from '../adapters/aws-clients';
import { DynamoDbOrderRepository } from '../adapters/dynamodb-order-repository';
import { requireEnv } from '../shared/config';
import { logger } from '../shared/observability';
import { internalError, isDependencyFailure, problem, serviceUnavailable, type HttpResponse } from './http';

/** The repository for the read/cancel handlers, built once per process. */
export function orderRepositoryFromEnv(): DynamoDbOrderRepository {
  return new DynamoDbOrderRepository(dynamoDbDocumentClient(), requireEnv('ORDERS_TABLE_NAME'));
}

const ORDER_ID = /^ord_[0-9a-f]{32}$/;

/** The `{orderId}` path parameter, or a 400 when it cannot be an order id. */
export function orderIdParam(event: APIGatewayProxyEvent): { ok: true; orderId: string } | { ok: false; response: HttpResponse } {
  const orderId = event.pathParameters?.orderId;
  if (orderId === undefined || !ORDER_ID.test(orderId)) {
    return {
      ok: false,
      response: problem({ status: 400, title: 'Invalid order id', detail: 'orderId must look like ord_ followed by 32 hex digits.' }),
    };
  }
  return { ok: true, orderId };
}

/** Last-resort mapping for the read/cancel handlers: 503 for a dependency, 500 for a bug, never a stack trace. */
export function unexpected(error: unknown): HttpResponse {
  if (isDependencyFailure(error)) {
    logger.warn('Dependency failure', { error });
    return serviceUnavailable();
  }
  logger.error('Unexpected error', { error });
  return internalError();
}
