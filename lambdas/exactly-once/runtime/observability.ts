import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';

/**
 * One Logger and one Metrics per function process. Service name and metrics
 * namespace come from POWERTOOLS_SERVICE_NAME / POWERTOOLS_METRICS_NAMESPACE,
 * which FunctionWithDefaults (lib/exactly-once/function-defaults.ts) sets on every function.
 *
 * @example An API handler
 * ```ts
 * import { logger } from '../../exactly-once/runtime';
 *
 * export const handler = async (event: APIGatewayProxyEvent, context: Context): Promise<HttpResponse> => {
 *   logger.addContext(context);
 *   // ...
 * };
 * ```
 */
export const logger = new Logger();
/**
 * The process's Powertools Metrics (see `logger`): record with it, publish with flushMetrics.
 *
 * @example
 * ```ts
 * metrics.addMetric('OrderPlaced', MetricUnit.Count, 1);
 * ```
 */
export const metrics = new Metrics();
/**
 * Powertools' metric units, re-exported so an application needs no Powertools import of its own.
 *
 * @example
 * ```ts
 * metrics.addMetric('OrderCancelRequested', MetricUnit.Count, 1);
 * ```
 */
export { MetricUnit } from '@aws-lambda-powertools/metrics';

/**
 * Publishes what the invocation recorded; an invocation with nothing to say stays quiet.
 *
 * @example Once per invocation, whatever happened: a cancel command's handler
 * ```ts
 * import { flushMetrics, metrics, MetricUnit } from '../../exactly-once/runtime';
 *
 * try {
 *   const outcome = await cancelOrder(orders, { caller, orderId, now: new Date() });
 *   if (outcome.kind === 'not-found') return notFound(`Order ${orderId} does not exist.`);
 *   metrics.addMetric('OrderCancelRequested', MetricUnit.Count, 1);
 *   return json(200, outcome.order);
 * } finally {
 *   flushMetrics();
 * }
 * ```
 */
export function flushMetrics(): void {
  if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
}
