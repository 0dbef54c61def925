import { AspectPriority, Aspects } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { AlarmDeliveryAspect } from './alarm-delivery';
import type { CorrectnessAspect } from './correctness-aspect';
import { DeadLetterQueueAspect } from './dead-letter-queue';
import { DedupeHorizonAspect } from './dedupe-horizon';
import { InboxTtlAspect } from './inbox-ttl';
import { OutboxRetentionAspect } from './outbox-retention';
import { StackModels } from './model';
import { ReportBatchItemFailuresAspect } from './report-batch-item-failures';
import { QueueSendersAspect } from './queue-senders';
import { ReservedConcurrencyAspect } from './reserved-concurrency';
import { RetryBudgetAspect } from './retry-budget';
import { StreamSourceAspect } from './stream-source';
import { VisibilityTimeoutAspect } from './visibility-timeout';

export { AlarmDeliveryAspect } from './alarm-delivery';
export { CorrectnessAspect, type CorrectnessAspectOptions, type CorrectnessRule } from './correctness-aspect';
export { DeadLetterQueueAspect, MIN_MAX_RECEIVE_COUNT } from './dead-letter-queue';
export { DEDUPE_HORIZON_ENV, DedupeHorizonAspect } from './dedupe-horizon';
export {
  DEFAULT_REDRIVE_ALLOWANCE_SECONDS,
  INBOX_TTL_ENV,
  InboxTtlAspect,
  requiredInboxTtlSeconds,
  type InboxTtlOptions,
} from './inbox-ttl';
export { LogRetentionAspect } from './log-retention';
export { OutboxRetentionAspect } from './outbox-retention';
export { StackModels, Unverifiable } from './model';
export { QueueSendersAspect } from './queue-senders';
export { ReportBatchItemFailuresAspect } from './report-batch-item-failures';
export { ALLOW_RESERVED_CONCURRENCY_CONTEXT, ReservedConcurrencyAspect } from './reserved-concurrency';
export { RetryBudgetAspect, type RetryBudgetOptions } from './retry-budget';
export { StreamSourceAspect } from './stream-source';
export { VISIBILITY_TIMEOUT_FACTOR, VisibilityTimeoutAspect } from './visibility-timeout';

/**
 * The options of applyCorrectnessAspects: the redrive allowance the InboxTtl rule adds, and how
 * every rule treats what it cannot check.
 *
 * @example A stack that allows longer to redrive than the default day
 * ```ts
 * applyCorrectnessAspects(this, { redriveAllowanceSeconds: REDRIVE_ALLOWANCE.toSeconds() });
 * ```
 */
export interface CorrectnessOptions {
  /**
   * Time allowed to redrive and process a dead-lettered message, added to the inbox TTL floor.
   *
   * @default 259200 (3 days, DEFAULT_REDRIVE_ALLOWANCE_SECONDS, the pipelines' REDRIVE_ALLOWANCE)
   */
  readonly redriveAllowanceSeconds?: number;
  /**
   * What to do with a rule that cannot be checked at synth time. See `CorrectnessAspectOptions`.
   *
   * @default 'error'
   */
  readonly unverifiable?: 'error' | 'warning';
}

/**
 * Registers the synth-time correctness rules of docs/architecture.md ("Correctness settings are checked at synth time") on `scope` (a
 * stack or the app): any violation is an error annotation, and synth fails.
 * They are added at `AspectPriority.READONLY` (they change nothing), check in
 * synth's validation phase (see `CorrectnessAspect`) and share one model per
 * stack. Returns the aspects.
 *
 * @example A construct's scope, with the allowance the pipelines derived the TTLs from, as ExactlyOnce registers them on itself (packages/cdk/src/exactly-once.ts)
 * ```ts
 * import { applyCorrectnessAspects, REDRIVE_ALLOWANCE } from '@exactly-once/cdk/parts';
 *
 * applyCorrectnessAspects(this, { redriveAllowanceSeconds: REDRIVE_ALLOWANCE.toSeconds() });
 * ```
 */
export function applyCorrectnessAspects(scope: IConstruct, options: CorrectnessOptions = {}): CorrectnessAspect[] {
  const common = { models: new StackModels(), unverifiable: options.unverifiable };
  const aspects: CorrectnessAspect[] = [
    new VisibilityTimeoutAspect(common),
    new DeadLetterQueueAspect(common),
    new ReportBatchItemFailuresAspect(common),
    new StreamSourceAspect(common),
    new InboxTtlAspect({ ...common, redriveAllowanceSeconds: options.redriveAllowanceSeconds }),
    new DedupeHorizonAspect(common),
    new AlarmDeliveryAspect(common),
    new RetryBudgetAspect(common),
    new ReservedConcurrencyAspect(common),
    new QueueSendersAspect(common),
    new OutboxRetentionAspect(common),
  ];
  for (const aspect of aspects) Aspects.of(scope).add(aspect, { priority: AspectPriority.READONLY });
  return aspects;
}
