import type { Violation } from './domain';

/**
 * The consumers' `EffectApplied` held against what is stored. Each event whose effect committed is
 * counted once, in the try that committed it, even when the provider call after the commit failed
 * (consumer/outcome-metrics.ts); its inbox claim commits with it. So per consumer the count can fall
 * short of the stored claims (a crashed or timed-out invocation dies before it flushes its metrics:
 * the `crash` fault, a kill), and never exceed them: more counted than stored is a commit counted
 * twice, or a copy counted as applied. A provider outage (`provider-outage` in `--faults all`) changes
 * neither: the committing try counts its commit, and the retry that makes the owed call counts
 * `OwedProviderCallCompleted`, not a duplicate.
 */
export interface AppliedMetricJudgement {
  consumer: string;
  /** `EffectApplied` over the run (flushed metrics). */
  counted: number;
  /** The judged events' inbox claims stored (verify.ts `countAppliedEffects`). */
  stored: number;
  /** `OwedProviderCallCompleted` over the run: provider calls a commit left owed, made by a later copy. */
  owedCallsCompleted: number;
  verdict: 'equal' | 'fewer (crashed invocations flush none)' | 'MORE than stored';
}

/**
 * One judgement per consumer whose metrics were measured (none where the target measures none).
 *
 * @example
 * ```ts
 * judgeAppliedMetrics({ loyalty: { EffectApplied: 20 } }, { loyalty: 20 }); // [{ consumer: 'loyalty', verdict: 'equal', ... }]
 * ```
 */
export function judgeAppliedMetrics(
  consumerMetrics: Readonly<Record<string, Readonly<Record<string, number>>>>,
  appliedEffects: Readonly<Record<string, number>>,
): AppliedMetricJudgement[] {
  return Object.entries(consumerMetrics).map(([consumer, m]) => {
    const counted = m.EffectApplied ?? 0;
    const stored = appliedEffects[consumer] ?? 0;
    return {
      consumer,
      counted,
      stored,
      owedCallsCompleted: m.OwedProviderCallCompleted ?? 0,
      verdict:
        counted === stored ? 'equal' : counted < stored ? 'fewer (crashed invocations flush none)' : 'MORE than stored',
    };
  });
}

/**
 * The proof's check of the metrics: a consumer that counted more commits than it stored claims is a
 * violation (`metrics`); fewer is what a crash costs, and is reported, not failed.
 *
 * @example
 * ```ts
 * violations.push(...appliedMetricViolations(judgeAppliedMetrics(consumerMetrics, appliedEffects)));
 * ```
 */
export function appliedMetricViolations(judgements: readonly AppliedMetricJudgement[]): Violation[] {
  return judgements
    .filter((j) => j.counted > j.stored)
    .map((j) => ({
      invariant: 'metrics',
      detail: `${j.consumer}: EffectApplied counted ${j.counted} commits, but ${j.stored} inbox claims are stored: a commit counted twice, or a copy counted as applied`,
    }));
}

/**
 * Suppressed duplicates: the consumers' own DuplicateSuppressed metric where measured; otherwise a
 * lower bound from the provider log (repeat calls under one key; a crash before the provider hides some).
 */
export function duplicatesOf(
  providerKeys: ReadonlyMap<string, number>,
  metrics: Record<string, number> | undefined,
): {
  duplicatesSuppressed: Record<string, number>;
  consumerMetrics: Record<string, Record<string, number>>;
} {
  const duplicatesSuppressed: Record<string, number> = {};
  const providerRepeats: Record<string, number> = {};
  for (const [key, calls] of providerKeys) {
    const consumer = key.split(':')[0];
    providerRepeats[consumer] = (providerRepeats[consumer] ?? 0) + Math.max(0, calls - 1);
  }
  const consumerMetrics: Record<string, Record<string, number>> = {};
  for (const [key, value] of Object.entries(metrics ?? {})) {
    const match = /^(\w+)\{consumer=([\w-]+)\}$/.exec(key); // consumer names may have hyphens
    if (match === null) continue;
    consumerMetrics[match[2]] = { ...consumerMetrics[match[2]], [match[1]]: value };
  }
  for (const consumer of new Set([...Object.keys(providerRepeats), ...Object.keys(consumerMetrics)])) {
    duplicatesSuppressed[consumer] = consumerMetrics[consumer]?.DuplicateSuppressed ?? providerRepeats[consumer] ?? 0;
  }
  return { duplicatesSuppressed, consumerMetrics };
}
