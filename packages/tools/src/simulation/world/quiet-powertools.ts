/**
 * Imported before anything that loads Powertools (which reads these when it loads): the simulated
 * functions log nothing and publish no metrics (thousands of invocations a second would drown the
 * output and the run). It imports nothing itself, so nothing can load ahead of it.
 */
process.env.POWERTOOLS_SERVICE_NAME ??= 'simulation';
process.env.POWERTOOLS_METRICS_NAMESPACE ??= 'Simulation';
process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
process.env.POWERTOOLS_METRICS_DISABLED = 'true';

export {};
