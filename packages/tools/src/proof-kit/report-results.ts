import type { Observation } from './drive';
import type { ChaosCounters } from '../local-runtime/provider';
import type { PlannedRequest } from './plan';
import type { Provenance } from './provenance';
import { loadTimeline, percentile, perEntityCost, timelineBucketSeconds } from './report-statistics';
import type { CallCounts, FaultEvidence, PipelineSamples, RunResults } from './run-results';
import { readableDuration } from './trace';
import type { Verification } from './verify';

export type { CallCounts, FaultEvidence, RunResults } from './run-results';

/**
 * The run's results summed up (their types, what the JSON file holds, are in run-results.ts) and its verdict. The
 * figures come from report-statistics.ts; the words, charts and pages from the renderers
 * (report-words.ts, report-charts.ts, report-html.ts).
 */

export function summarize(
  input: Pick<RunResults, 'runId' | 'target' | 'seed' | 'profile' | 'faults' | 'startedAt'> & {
    plan: readonly PlannedRequest[];
    observations: readonly Observation[];
    durationMs: number;
    injected: RunResults['injected'];
    drain: RunResults['drain'];
    verification: Verification;
    calls: CallCounts;
    evidence?: FaultEvidence;
    providerChaos?: ChaosCounters;
    pipeline?: PipelineSamples;
    trace?: RunResults['trace'];
    provenance?: Provenance;
  },
): RunResults {
  const answered = input.observations.filter((o) => o.status !== 'no-response');
  const latencies = answered.map((o) => o.latencyMs).sort((a, b) => a - b);
  const statuses: Record<string, number> = {};
  for (const o of input.observations) statuses[String(o.status)] = (statuses[String(o.status)] ?? 0) + 1;
  const byOperation: Record<string, number> = {};
  for (const p of input.plan) byOperation[p.op] = (byOperation[p.op] ?? 0) + 1;
  const { perEntity, costPerMillionEntities } = perEntityCost(input.calls, input.verification.counts.entities);
  const bucketSeconds = timelineBucketSeconds(input.durationMs);
  const timeline = loadTimeline(input.observations, bucketSeconds);

  return {
    runId: input.runId,
    target: input.target,
    seed: input.seed,
    profile: input.profile,
    faults: input.faults,
    startedAt: input.startedAt,
    plan: { requests: input.plan.length, byOperation },
    http: {
      durationMs: input.durationMs,
      throughputPerSecond: answered.length / Math.max(0.001, input.durationMs / 1000),
      latencyMs: {
        p50: percentile(latencies, 0.5),
        p90: percentile(latencies, 0.9),
        p99: percentile(latencies, 0.99),
        max: latencies.at(-1) ?? 0,
      },
      statuses,
      replaysServed: input.observations.filter((o) => o.replayed).length,
      conflicts409: statuses['409'] ?? 0,
    },
    injected: input.injected,
    drain: input.drain,
    verification: input.verification,
    calls: input.calls,
    evidence: input.evidence,
    providerChaos: input.providerChaos,
    perEntity,
    costPerMillionEntities,
    timeline,
    timelineBucketSeconds: bucketSeconds,
    ...(input.provenance === undefined ? {} : { provenance: input.provenance }),
    ...(input.pipeline === undefined ? {} : { pipeline: input.pipeline }),
    ...(input.trace === undefined ? {} : { trace: input.trace }),
    passed: input.verification.violations.length === 0 && input.drain.drained,
  };
}

/**
 * The run's verdict: PASS only with no violation on a drained pipeline. A run that did not drain is its
 * own verdict, never "FAIL, 0 violations": work was still under way, so the invariants were checked on
 * a state that was not final, and 0 violations proves nothing yet.
 */
export function verdictOf(violations: number, drain: { drained: boolean; waitedMs: number }): Verdict {
  if (violations > 0)
    return {
      kind: 'fail',
      headline: `FAIL, ${violations} violation(s)${drain.drained ? '' : `, and not drained after ${readableDuration(drain.waitedMs, 's')}`}`,
    };
  if (!drain.drained)
    return {
      kind: 'not-drained',
      headline: `NOT DRAINED after ${readableDuration(drain.waitedMs, 's')}`,
      detail: 'work was still in the pipeline, so the 0 violations found prove nothing yet',
    };
  return { kind: 'pass', headline: 'PASS, effects == intents' };
}

export interface Verdict {
  kind: 'pass' | 'fail' | 'not-drained';
  headline: string;
  /** Why, where the headline alone could mislead (a run that did not drain). */
  detail?: string;
}

/** The verdict in one line: its headline and, if it has one, why. */
export const verdictLine = (v: Verdict): string => (v.detail === undefined ? v.headline : `${v.headline}: ${v.detail}`);
