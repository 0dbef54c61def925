import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { logger } from '../shared/observability';
import { getOrder } from '../use-cases/get-order';
import { callerOf, FORBIDDEN, json, notFound, type HttpResponse, unexpectedErrorResponse } from '../handlers/http';
import { orderIdParam, orderRepositoryFromEnv } from '../handlers/order-api-support';

/** GET /orders/{orderId}: the order read model. An Idempotency-Key on a GET is ignored. */
const orders = orderRepositoryFromEnv();

export const handler = async (event: APIGatewayProxyEvent, context: Context): Promise<HttpResponse> => {
  logger.addContext(context);
  try {
    const caller = callerOf(event);
    if (caller === undefined) return FORBIDDEN;
    const id = orderIdParam(event);
    if (!id.ok) return id.response;

    const order = await getOrder(orders, { caller, orderId: id.orderId });
    return order === undefined ? notFound(`Order ${id.orderId} does not exist.`) : json(200, order);
  } catch (error) {
    return unexpectedErrorResponse(error);
  }
};
