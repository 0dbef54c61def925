import type { SQSEvent } from 'aws-lambda';
import type { ConsumerSettings } from '@exactly-once/runtime/consumer/consume-record';
import type { MechanismGuards } from '../options';
import { oldBudget } from './retry-budget';

/**
 * Guards on a consumer's settings, each the test-only change it stands for: `retryBudget=seconds` (the
 * budget before the fix, retry-budget.ts); `dedupeHorizon` off (no event is too old: a redrive after its
 * claim's TTL applies it again); `futureStamps` off (any stamp ahead of the clock passes; the claims'
 * TTL half is in transactions.ts).
 */
export function settingsUnderGuards(
  settings: ConsumerSettings,
  guards: Pick<MechanismGuards, 'retryBudget' | 'dedupeHorizon' | 'futureStamps'>,
  fifo: boolean,
  event: SQSEvent,
  random: () => number,
): ConsumerSettings {
  let guarded = guards.retryBudget === 'seconds' ? oldBudget(settings, fifo, event, random) : settings;
  if (!guards.dedupeHorizon) guarded = { ...guarded, dedupeHorizonSeconds: Number.POSITIVE_INFINITY };
  if (!guards.futureStamps) guarded = { ...guarded, maxFutureSkewSeconds: Number.POSITIVE_INFINITY };
  return guarded;
}
