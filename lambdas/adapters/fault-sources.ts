import { getParameter } from '@aws-lambda-powertools/parameters/ssm';
import { readFile } from 'node:fs/promises';
import { NO_FAULTS, parseFaultPlan, type FaultPlan } from '../domain/faults';
import type { FaultSource } from '../ports/fault-source';
import { logger } from '../shared/observability';

const CACHE_SECONDS = 5;

/**
 * The fault plan for this process:
 * - `FAULT_INJECTION_FILE` (the local runtime): a JSON file the proof kit writes per run;
 * - `FAULT_PARAMETER_NAME` (AWS): an SSM parameter, cached for a few seconds so
 *   a switch takes effect within one cache period without a redeploy;
 * - neither: no faults, ever.
 * A plan that cannot be read means no faults: injection must never break a real run.
 */
export function faultSourceFromEnv(): FaultSource {
  const file = process.env.FAULT_INJECTION_FILE;
  if (file) return cached(() => readFile(file, 'utf8').then((text) => JSON.parse(text)));
  const parameter = process.env.FAULT_PARAMETER_NAME;
  if (parameter) return cached(() => getParameter(parameter, { transform: 'json', maxAge: CACHE_SECONDS }));
  return { current: async () => NO_FAULTS };
}

function cached(load: () => Promise<unknown>): FaultSource {
  let plan: FaultPlan = NO_FAULTS;
  let loadedAt = 0;
  return {
    async current() {
      if (Date.now() - loadedAt < CACHE_SECONDS * 1000) return plan;
      loadedAt = Date.now();
      try {
        const next = parseFaultPlan(await load(), process.pid);
        // Same plan: keep the current one, so a seeded generator runs on instead of restarting.
        if (JSON.stringify(next) !== JSON.stringify(plan)) {
          logger.warn('Fault injection plan changed', { plan: next });
          plan = next;
        }
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') logger.warn('Fault plan unreadable; running without faults', { error });
        if (plan !== NO_FAULTS) logger.warn('Fault injection plan changed', { plan: NO_FAULTS });
        plan = NO_FAULTS;
      }
      return plan;
    },
  };
}
