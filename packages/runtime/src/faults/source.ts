import { readFile } from 'node:fs/promises';
import { readJsonParameter } from '../aws/ssm-json-parameter';
import { logger, metrics, MetricUnit } from '../runtime/observability';
import { FAULT_FILE_ENV, FAULT_PARAMETER_ENV, FAULT_PLAN_ACTIVE_METRIC } from './names';
import { NO_FAULTS, parseFaultPlan, type FaultPlan } from './plan';

/** Where the current run's fault plan comes from (an SSM parameter on AWS, a file locally). */
export interface FaultSource {
  current(): Promise<FaultPlan>;
}

const CACHE_SECONDS = 5;

/**
 * The fault plan for this process:
 * - `FAULT_INJECTION_FILE` (the local runtime): a JSON file the proof kit writes per run;
 * - `FAULT_PARAMETER_NAME` (AWS): an SSM parameter, cached for a few seconds so
 *   a switch takes effect within one cache period without a redeploy;
 * - neither: no faults, ever.
 * A plan that cannot be read means no faults: injection must never break a real run.
 */
export function faultSourceFromEnv(env: NodeJS.ProcessEnv = process.env): FaultSource {
  const file = env[FAULT_FILE_ENV];
  if (file) return cachedSource(() => readFile(file, 'utf8').then((text) => JSON.parse(text)));
  const parameter = env[FAULT_PARAMETER_ENV];
  if (parameter) return cachedSource(() => readJsonParameter(parameter, CACHE_SECONDS));
  return { current: async () => NO_FAULTS };
}

/**
 * The plan a function's fault decorators run under: `refresh()` reads it once
 * per invocation (from the cached source) and counts the invocation for the
 * fault-plan alarm when a plan is on; `plan()` is the one read last.
 */
export function planHolder(source: FaultSource) {
  let plan: FaultPlan = NO_FAULTS;
  return {
    async refresh(): Promise<FaultPlan> {
      plan = await source.current();
      // What the fault-plan alarm watches: faults are being injected into this stack right now.
      if (plan !== NO_FAULTS) metrics.addMetric(FAULT_PLAN_ACTIVE_METRIC, MetricUnit.Count, 1);
      return plan;
    },
    plan: (): FaultPlan => plan,
  };
}

/** Re-reads the plan at most every few seconds; an expired plan reads as no faults (./plan.ts). */
export function cachedSource(load: () => Promise<unknown>, now: () => number = Date.now): FaultSource {
  let plan: FaultPlan = NO_FAULTS;
  let loadedAt = -Infinity;
  return {
    async current() {
      if (now() - loadedAt < CACHE_SECONDS * 1000) return expired(plan, now()) ? NO_FAULTS : plan;
      loadedAt = now();
      try {
        const next = parseFaultPlan(await load(), process.pid, now());
        // Same plan: keep the current one, so a seeded generator runs on instead of restarting.
        if (JSON.stringify(next) !== JSON.stringify(plan)) {
          logger.warn('Fault injection plan changed', { plan: next });
          plan = next;
        }
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
          logger.warn('Fault plan unreadable; running without faults', { error });
        if (plan !== NO_FAULTS) logger.warn('Fault injection plan changed', { plan: NO_FAULTS });
        plan = NO_FAULTS;
      }
      return plan;
    },
  };
}

function expired(plan: FaultPlan, now: number): boolean {
  return plan.expiresAt !== undefined && now >= Date.parse(plan.expiresAt);
}
