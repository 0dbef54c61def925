import type { DeliveryCounts } from '../local-runtime/host/delivery-evidence';
import type { Observation } from './drive';
import type { PlannedRequest } from './plan';
import type { PipelineSamples } from './sampler';
import type { Provenance } from './provenance';
import { loadTimeline, percentile, perEntityCost, timelineBucketSeconds } from './report-statistics';
import { readableDuration, type OrderTrace } from './trace';
import type { Verification } from './verify';
import type { ChaosCounters } from '../local-runtime/provider';

/**
 * The run's results as data (what the JSON file holds and every renderer reads) and its verdict. The
 * figures come from report-statistics.ts; the words, charts and pages from the renderers
 * (report-words.ts, report-charts.ts, report-html.ts).
 */

export interface CallCounts {
  /** Measured by the local runtime between the emulators and the functions, or undefined where not measured. */
  dynamodbWrites?: number;
  dynamodbReads?: number;
  sqs?: number;
  lambdaInvocations?: number;
  apiRequests: number;
  /** Consumer metrics over the run (local runtime: summed from the functions' EMF output). */
  metrics?: Record<string, number>;
  /** Local runtime: per function, counters that show which fault fired (see FaultEvidence). */
  functions?: FaultEvidence;
}

/**
 * Per function (display name), what the local host saw during the run: crashes
 * (the `crash` fault), a message redelivered while its first delivery still ran
 * (`slow`), an event arriving in a message the resend fault marked (`resend`), an event
 * stamped ahead of its send (`clock-skew`). Not measured on AWS.
 */
export type FaultEvidence = Record<string, { crashes: number } & DeliveryCounts>;

export interface RunResults {
  runId: string;
  target: string;
  seed: number;
  profile: string;
  faults: string[];
  startedAt: string;
  plan: { requests: number; byOperation: Record<string, number> };
  http: {
    durationMs: number;
    throughputPerSecond: number;
    latencyMs: { p50: number; p90: number; p99: number; max: number };
    statuses: Record<string, number>;
    replaysServed: number;
    conflicts409: number;
  };
  injected: {
    poisonMessages: number;
    redriven: number;
    /** Idempotency keys the local provider was made to forget before the redrive (`keys-forgotten`). */
    providerKeysForgotten?: number;
  };
  drain: { drained: boolean; waitedMs: number };
  verification: Verification;
  calls: CallCounts;
  /** Local runtime only: per-function evidence that each fault fired, over this run. */
  evidence?: FaultEvidence;
  /** Local provider only: what its chaos did over this run, one count per request a fault hit. */
  providerChaos?: ChaosCounters;
  perEntity: Record<string, number | undefined>;
  costPerMillionEntities?: number;
  /**
   * The load over time, in buckets of `timelineBucketSeconds` (a second, or less for a short load, so a
   * 3-second run still draws a curve): requests started in each, per second, and their latency.
   */
  timeline: { second: number; requests: number; perSecond: number; p50: number; p99: number }[];
  timelineBucketSeconds: number;
  /** Where and how the run was made, and the command that makes it again; absent in results written before. */
  provenance?: Provenance;
  /** The pipeline over the run's time axis (queues, consumers, effect lag), when it was sampled. */
  pipeline?: PipelineSamples;
  /**
   * The spans the local runtime recorded over the run and the slowest order's trace among them;
   * undefined where spans are not collected (a deployed stack).
   */
  trace?: { recorded: number; slowest?: OrderTrace };
  passed: boolean;
}

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
