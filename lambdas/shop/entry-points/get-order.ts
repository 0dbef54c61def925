import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { callerRuleFromEnv, json, notFound, type CallerRule, type HttpResponse } from '@exactly-once/runtime/api';
import { logger } from '@exactly-once/runtime/runtime';
import type { OrderRepository } from '../ports/order-repository';
import { getOrder } from '../use-cases/get-order';
import { orderRepositoryFromEnv, orderRequestOf, shopErrorResponse } from '../api/order-request';

/** What GET /orders/{orderId} runs on (deployed: `partsFromEnv`, below). */
export interface Parts {
  orders: OrderRepository;
  /** Which role sessions are people (packages/runtime/src/api/caller.ts). */
  callerRule: CallerRule;
}

/** GET /orders/{orderId}: the order read model. An Idempotency-Key on a GET is ignored. */
export function makeHandler({ orders, callerRule }: Parts) {
  return async (event: APIGatewayProxyEvent, context: Context): Promise<HttpResponse> => {
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
}

/** The deployed parts, from the environment the stack sets: read once, at cold start. */
export function partsFromEnv(): Parts {
  return { orders: orderRepositoryFromEnv(), callerRule: callerRuleFromEnv() };
}
