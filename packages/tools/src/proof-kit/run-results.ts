import type { DeliveryCounts } from '../local-runtime/host/delivery-evidence';
import type { ChaosCounters } from '../local-runtime/provider';
import type { QueueCounts } from './drain';
import type { Provenance } from './provenance';
import type { OrderTrace } from './trace';
import type { Verification } from './verify';

/**
 * The run's results as data, types only: what the JSON file holds, what the sampler gathers and every
 * renderer reads. They sit apart from the code that makes them (report-results.ts, sampler.ts) and the
 * code that draws them (report*.ts, fault-marks.ts), so each of those imports this module and none
 * imports another back: a circle would load a module half-initialised.
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

export interface PipelineSample {
  /** Seconds since the sampler started. */
  second: number;
  queues: Record<string, QueueCounts>;
  /** Cumulative since the start, e.g. `EffectApplied{consumer=loyalty}`; absent where not measured. */
  counters?: Record<string, number>;
}

export interface EffectLagPoint {
  /** Second (since the sampler started) in which the orders were accepted. */
  second: number;
  consumer: string;
  p50: number;
  p99: number;
  count: number;
}

export interface PipelineSamples {
  intervalMs: number;
  /** When the sampler started (epoch ms): second 0 of the charts. */
  startedAtMs?: number;
  samples: PipelineSample[];
  marks: { second: number; label: string }[];
  effectLag: EffectLagPoint[];
}
