import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';

/**
 * One Logger and one Metrics per function process. Service name and metrics
 * namespace come from POWERTOOLS_SERVICE_NAME / POWERTOOLS_METRICS_NAMESPACE,
 * which the house function construct sets on every function.
 */
export const logger = new Logger();
export const metrics = new Metrics();
export { MetricUnit } from '@aws-lambda-powertools/metrics';

/** Publishes what the invocation recorded; an invocation with nothing to say stays quiet. */
export function flushMetrics(): void {
  if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
}
