import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { callerRuleFromEnv, json, notFound, type HttpResponse } from '@exactly-once/runtime/api';
import { logger } from '@exactly-once/runtime/runtime';
import { getOrder } from '../use-cases/get-order';
import { orderRequestOf, orderRepositoryFromEnv, shopErrorResponse } from '../api/order-request';

/** GET /orders/{orderId}: the order read model. An Idempotency-Key on a GET is ignored. */
const orders = orderRepositoryFromEnv();
const callerRule = callerRuleFromEnv();

export const handler = async (event: APIGatewayProxyEvent, context: Context): Promise<HttpResponse> => {
  logger.addContext(context);
  try {
    const request = orderRequestOf(event, callerRule);
    if (!request.ok) return request.response;
    const { caller, orderId } = request;

    const order = await getOrder(orders, { caller, orderId });
    return order === undefined ? notFound(`Order ${orderId} does not exist.`) : json(200, order);
  } catch (error) {
    return shopErrorResponse(error);
  }
};
