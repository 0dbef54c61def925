import type { ApplyOutcome } from '../inbox/ports';
import type { RecordTally } from './record-work';

/**
 * The metrics one record's try counts, from how it ended (its outcome, or `failed`: a permanent or
 * transient error) and what its tally says it did:
 * - `EffectApplied`: the try's claim and effect committed, counted once, in the try that committed
 *   them, even when the provider call after the commit failed (its retry is not counted again);
 * - `OwedProviderCallCompleted`: a provider call that an earlier try's commit left owed was made and
 *   recorded done in this try (a duplicate's work, but not a copy of finished work);
 * - `DuplicateSuppressed`: a copy of finished work, nothing done (its call already done, superseded, or
 *   made by another copy meanwhile);
 * - `StaleEventIgnored`: a newer event of the entity was applied first.
 * A try that failed counts only what it did before it failed; its failure is counted on its own
 * (`PermanentFailure`, `TransientFailure`).
 *
 * @example consumeRecord's count after a try
 * ```ts
 * for (const name of outcomeMetrics(outcome, tally)) metrics.addMetric(name, MetricUnit.Count, 1);
 * ```
 */
export function outcomeMetrics(end: ApplyOutcome | 'failed', tally: RecordTally): string[] {
  const names: string[] = [];
  // `applied` without a tally mark: a ledger that does not tally its commit still says it committed.
  if (tally.committed || end === 'applied') names.push('EffectApplied');
  if (tally.owedCallCompleted) names.push('OwedProviderCallCompleted');
  else if (end === 'duplicate') names.push('DuplicateSuppressed');
  if (end === 'stale') names.push('StaleEventIgnored');
  return names;
}
