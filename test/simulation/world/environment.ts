/**
 * Imported first by the simulation: Powertools reads these at module load.
 * The simulated functions log nothing and publish no metrics (thousands of
 * invocations a second would drown the output and the run).
 */
process.env.POWERTOOLS_SERVICE_NAME ??= 'simulation';
process.env.POWERTOOLS_METRICS_NAMESPACE ??= 'Simulation';
process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
process.env.POWERTOOLS_METRICS_DISABLED = 'true';

export {};
