import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { flushMetrics, logger, metrics, MetricUnit } from '../shared/observability';
import { cancelOrder } from '../use-cases/cancel-order';
import { callerOf, FORBIDDEN, json, notFound, type HttpResponse, unexpectedErrorResponse } from '../handlers/http';
import { orderIdParam, orderRepositoryFromEnv } from '../handlers/order-api-support';

/** POST /orders/{orderId}/cancel: idempotent by nature; an Idempotency-Key is optional and not needed. */
const orders = orderRepositoryFromEnv();

export const handler = async (event: APIGatewayProxyEvent, context: Context): Promise<HttpResponse> => {
  logger.addContext(context);
  try {
    const caller = callerOf(event);
    if (caller === undefined) return FORBIDDEN;
    const id = orderIdParam(event);
    if (!id.ok) return id.response;

    const outcome = await cancelOrder(orders, { caller, orderId: id.orderId, now: new Date() });
    if (outcome.kind === 'not-found') return notFound(`Order ${id.orderId} does not exist.`);
    metrics.addMetric('OrderCancelRequested', MetricUnit.Count, 1);
    return json(200, outcome.order);
  } catch (error) {
    return unexpectedErrorResponse(error);
  } finally {
    flushMetrics();
  }
};
