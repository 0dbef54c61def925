import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import {
  callerRuleFromEnv,
  inRequestSpan,
  json,
  notFound,
  type CallerRule,
  type HttpResponse,
} from '@exactly-once/runtime/api';
import { flushMetrics, logger, metrics, MetricUnit } from '@exactly-once/runtime/runtime';
import type { OrderRepository } from '../ports/order-repository';
import { cancelOrder } from '../use-cases/cancel-order';
import { orderRepositoryFromEnv, orderRequestOf, shopErrorResponse } from '../api/order-request';

/** What POST /orders/{orderId}/cancel runs on (deployed: `partsFromEnv`, below). */
export interface Parts {
  orders: OrderRepository;
  /** Which role sessions are people (packages/runtime/src/api/caller.ts). */
  callerRule: CallerRule;
}

/** POST /orders/{orderId}/cancel: idempotent by nature; an Idempotency-Key is optional and not needed. */
export function makeHandler(parts: Parts) {
  return async (event: APIGatewayProxyEvent, context: Context): Promise<HttpResponse> => {
    logger.addContext(context);
    try {
      return await inRequestSpan(event, 'POST /orders/{orderId}/cancel', () => cancel(parts, event));
    } finally {
      flushMetrics();
    }
  };
}

async function cancel({ orders, callerRule }: Parts, event: APIGatewayProxyEvent): Promise<HttpResponse> {
  try {
    const request = orderRequestOf(event, callerRule);
    if (!request.ok) return request.response;
    const { caller, orderId } = request;

    const outcome = await cancelOrder(orders, { caller, orderId, now: new Date() });
    if (outcome.kind === 'not-found') return notFound(`Order ${orderId} does not exist.`);
    metrics.addMetric('OrderCancelRequested', MetricUnit.Count, 1);
    return json(200, outcome.order);
  } catch (error) {
    return shopErrorResponse(error);
  }
}

/** The deployed parts, from the environment the stack sets: read once, at cold start. */
export function partsFromEnv(): Parts {
  return { orders: orderRepositoryFromEnv(), callerRule: callerRuleFromEnv() };
}
