/**
 * What every function of the mechanism runs with (`exactly-once/runtime`): its configuration, read once
 * at cold start by helpers that throw naming the variable; the environment names the stack sets; the
 * names of a stack's outputs; Powertools' logger and metrics, shared by the mechanism and the application.
 *
 * @example A handler module's cold start
 * ```ts
 * import { logger, requireEnv } from '.';
 *
 * const tableName = requireEnv('ORDERS_TABLE_NAME');
 * logger.info('ready', { tableName });
 * ```
 */

export { optionalEnv, optionalIntEnv, requireEnv, requireIntEnv } from '../config';
export { ENV, providerEnvNames } from '../env-names';
export { consumerId, consumerOutputNames } from '../consumer-spec';
export { STACK_OUTPUTS } from '../stack-outputs';
export { retryAfterSecondsOf, type PermanentCause } from '../errors';
export { flushMetrics, logger, metrics, MetricUnit } from './observability';
export { inChildSpan } from '../trace/spans';
export { DEFAULT_SPAN_SAMPLING, type SpanSampling } from '../trace/span-sampling';
