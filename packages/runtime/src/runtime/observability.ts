import { Logger, type LogItem } from '@aws-lambda-powertools/logger';
import type { ConstructorOptions, LogItemExtraInput, LogItemMessage } from '@aws-lambda-powertools/logger/types';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { activeSpanStore } from '../trace/active-span';

/**
 * Powertools' Logger whose lines carry, as `correlation_id`, the trace id of the span they are logged
 * in (an API request's, a record's try, a provider call's), read per line from the active span: one
 * consumer invocation handles its records side by side (FIFO groups, a standard batch), so an id set
 * on the logger per record (`setCorrelationId`, one value for the whole invocation) would be the wrong
 * record's on the other records' lines. A line outside any span keeps what `setCorrelationId` set, if
 * anything.
 */
class TraceCorrelatedLogger extends Logger {
  protected override createAndPopulateLogItem(
    logLevel: number,
    input: LogItemMessage,
    extraInput: LogItemExtraInput,
  ): LogItem {
    const item = super.createAndPopulateLogItem(logLevel, input, extraInput);
    const traceId = activeSpanStore.getStore()?.traceId;
    return traceId === undefined ? item : item.addAttributes({ correlation_id: traceId });
  }

  protected override createLogger(options?: ConstructorOptions): Logger {
    return new TraceCorrelatedLogger(options);
  }
}

/**
 * One Logger and one Metrics per function process. Service name and metrics
 * namespace come from POWERTOOLS_SERVICE_NAME / POWERTOOLS_METRICS_NAMESPACE,
 * which FunctionWithDefaults (packages/cdk/src/function-defaults.ts) sets on every function.
 * A line logged inside a span carries the span's trace id as `correlation_id` (the id that finds
 * the hop in X-Ray and the `Span` lines).
 *
 * @example An API handler
 * ```ts
 * import { logger } from '.';
 *
 * export const handler = async (event: APIGatewayProxyEvent, context: Context): Promise<HttpResponse> => {
 *   logger.addContext(context);
 *   // ...
 * };
 * ```
 */
export const logger: Logger = new TraceCorrelatedLogger();
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
 * import { flushMetrics, metrics, MetricUnit } from '.';
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
