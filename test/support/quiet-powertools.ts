/**
 * Jest's setup for the in-process projects (before any test module loads): Powertools reads its settings when
 * it loads, and the mechanism's index loads it with everything that imports the mechanism, so a
 * test that sets these itself (useUnitEnvironment) would set them too late. Silent logs and no
 * metrics unless a test asks for them.
 */
process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
process.env.POWERTOOLS_DEV ??= 'true';
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
