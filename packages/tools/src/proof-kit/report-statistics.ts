/**
 * The run's figures from its raw observations, for the results (report-results.ts): percentiles, the
 * load's timeline in buckets, the calls per entity and what they cost. Pure arithmetic, no words.
 */
import type { Observation } from './drive';
import { costBreakdown } from './prices';
import type { CallCounts, RunResults } from './run-results';

/**
 * How wide the load's time buckets are: about 60 of them over the load, between 0.1 s and 1 s, so a
 * 3-second smoke load draws 30 points rather than a line between two, and a long one stays per second.
 */
export function timelineBucketSeconds(durationMs: number): number {
  const wanted = durationMs / 1000 / 60;
  return [0.1, 0.2, 0.25, 0.5, 1].find((b) => b >= wanted) ?? 1;
}

/** The load over time: requests started in each bucket of `bucketSeconds`, per second, and their latency. */
export function loadTimeline(observations: readonly Observation[], bucketSeconds: number): RunResults['timeline'] {
  const answered = observations.filter((o) => o.status !== 'no-response');
  const start = Math.min(...observations.map((o) => o.startedAt));
  const buckets = new Map<number, number[]>();
  for (const o of answered) {
    const bucket = Math.floor((o.startedAt - start) / Math.round(bucketSeconds * 1000)); // in ms: 0.3 / 0.1 < 3
    buckets.set(bucket, [...(buckets.get(bucket) ?? []), o.latencyMs]);
  }
  return [...buckets.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([bucket, values]) => {
      const sorted = values.sort((a, b) => a - b);
      return {
        second: Number((bucket * bucketSeconds).toFixed(3)),
        requests: values.length,
        perSecond: values.length / bucketSeconds,
        p50: percentile(sorted, 0.5),
        p99: percentile(sorted, 0.99),
      };
    });
}

/** The calls per judged entity and, where every kind was measured, what a million entities cost in requests. */
export function perEntityCost(
  calls: CallCounts,
  judgedEntities: number,
): Pick<RunResults, 'perEntity' | 'costPerMillionEntities'> {
  const entities = Math.max(1, judgedEntities);
  const perEntity = {
    apiRequests: calls.apiRequests / entities,
    lambdaInvocations: ratio(calls.lambdaInvocations, entities),
    dynamodbWrites: ratio(calls.dynamodbWrites, entities),
    dynamodbReads: ratio(calls.dynamodbReads, entities),
    sqsRequests: ratio(calls.sqs, entities),
  };
  const measured =
    perEntity.lambdaInvocations !== undefined &&
    perEntity.dynamodbWrites !== undefined &&
    perEntity.sqsRequests !== undefined;
  // Every table measured together: one write and one read line.
  const costPerMillionEntities = measured
    ? costBreakdown({
        apiRequestsPerEntity: perEntity.apiRequests,
        lambdaInvocationsPerEntity: perEntity.lambdaInvocations!,
        dynamoDb: {
          'all tables (measured)': { writeUnits: perEntity.dynamodbWrites!, readUnits: perEntity.dynamodbReads ?? 0 },
        },
        sqsRequestsPerEntity: perEntity.sqsRequests!,
      }).totalPerMillionEntities
    : undefined;
  return { perEntity, costPerMillionEntities };
}

function ratio(value: number | undefined, entities: number): number | undefined {
  return value === undefined ? undefined : value / entities;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

/** A step line of how many of `times` (epoch ms) had happened by each point, from 0 to `end` seconds, at most ~200 steps. */
export function cumulativePoints(times: readonly number[], origin: number, end: number): { x: number; y: number }[] {
  const sorted = [...times].sort((a, b) => a - b).map((t) => Math.max(0, (t - origin) / 1000));
  const every = Math.max(1, Math.ceil(sorted.length / 200));
  const points = [{ x: 0, y: 0 }];
  sorted.forEach((x, i) => {
    if ((i + 1) % every === 0 || i === sorted.length - 1) points.push({ x, y: i + 1 });
  });
  points.push({ x: Math.max(end, points.at(-1)!.x), y: sorted.length });
  return points;
}
