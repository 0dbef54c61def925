import { TOOLING_MODULE_ENV } from '@exactly-once/tools/example';
import { PROBE_TOOLING_MODULE } from './probe-tooling';

/**
 * Imported first by a test file whose tools run on the probe app: points the tools at the probe
 * tooling (probe-tooling.ts) in its process and every process it starts, before any tool module loads
 * (some read their domain as they load, e.g. the proof kit's sampled queues). Refuses when another
 * tooling module is named already.
 */
const current = process.env[TOOLING_MODULE_ENV];
if (current !== undefined && current !== PROBE_TOOLING_MODULE)
  throw new Error(`${TOOLING_MODULE_ENV} already names ${current}, not the probe tooling`);
process.env[TOOLING_MODULE_ENV] = PROBE_TOOLING_MODULE;
