import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { callerRuleFromEnv, inRequestSpan, json, notFound, type HttpResponse } from '@exactly-once/runtime/api';
import { flushMetrics, logger, metrics, MetricUnit } from '@exactly-once/runtime/runtime';
import { cancelOrder } from '../use-cases/cancel-order';
import { orderRequestOf, orderRepositoryFromEnv, shopErrorResponse } from '../api/order-request';

/** POST /orders/{orderId}/cancel: idempotent by nature; an Idempotency-Key is optional and not needed. */
const orders = orderRepositoryFromEnv();
const callerRule = callerRuleFromEnv();

export const handler = async (event: APIGatewayProxyEvent, context: Context): Promise<HttpResponse> => {
  logger.addContext(context);
  try {
    return await inRequestSpan(event, 'POST /orders/{orderId}/cancel', () => cancel(event));
  } finally {
    flushMetrics();
  }
};

async function cancel(event: APIGatewayProxyEvent): Promise<HttpResponse> {
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
