/**
 * Loaded by cli.ts before anything of the mechanism: Powertools reads these when it loads. The consumers
 * the bench runs in its own process would otherwise print a metrics blob per invocation and a line per
 * duplicate between the figures; the functions it runs under the local runtime still print theirs.
 */
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
process.env.POWERTOOLS_LOG_LEVEL ??= 'ERROR';
