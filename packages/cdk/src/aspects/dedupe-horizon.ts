import {
  DEDUPE_HORIZON_MARGIN_SECONDS,
  MAX_FUTURE_SKEW_SECONDS,
  maxHorizonForClaimTtl,
} from '@exactly-once/runtime/consumer/dedupe-horizon';
import { ENV } from '@exactly-once/runtime/env-names';
import { CorrectnessAspect } from './correctness-aspect';
import { EVENT_SOURCE_MAPPING, environmentVariable, type RenderedResource, type StackModel } from './model';

/**
 * The environment variable from which a consumer takes its dedupe horizon, in seconds.
 *
 * @example
 * ```ts
 * environment: { [DEDUPE_HORIZON_ENV]: String(dedupe.horizonSeconds), [INBOX_TTL_ENV]: String(dedupe.claimTtlSeconds) },
 * ```
 */
export const DEDUPE_HORIZON_ENV = ENV.dedupeHorizonSeconds;

/**
 * Rule DedupeHorizon: every function that consumes an SQS queue through an
 * event source mapping has `DEDUPE_HORIZON_SECONDS` (a whole number of seconds)
 * and it is at most its `INBOX_TTL_SECONDS` minus the clock-skew margin (1 day); a function with
 * `CONSUMER_LEDGER=sequenced` (ConsumerSpec.ledger) and no horizon passes, its claims never expiring.
 *
 * Why: a redrive gives a message fresh retention, so no queue setting bounds
 * how late an event can arrive; the consumer's horizon does (it dead-letters an
 * event older than that with the cause DedupeHorizonPassed). An event younger
 * than the horizon must still find its inbox claim, or its effect is applied a
 * second time: so the claim must outlive the horizon by more than the clocks of
 * producer and consumer can disagree. (The InboxTtl rule checks the TTL itself
 * against the queues.) The error is on the function.
 *
 * What it relies on at run time: a claim expires its TTL after the later of claim
 * time and the event's `occurredAt`, and a consumer refuses an event stamped more
 * than MAX_FUTURE_SKEW_SECONDS (300 s) ahead of its clock (OccurredInFuture), so
 * the argument holds for every event a consumer accepts; the error message states both margins.
 *
 * @example applyCorrectnessAspects registers it with the others; alone, e.g. in a test of this one rule
 * ```ts
 * Aspects.of(stack).add(new DedupeHorizonAspect(), { priority: AspectPriority.READONLY });
 * ```
 */
export class DedupeHorizonAspect extends CorrectnessAspect {
  readonly rule = 'DedupeHorizon' as const;
  protected readonly resourceType = EVENT_SOURCE_MAPPING;

  protected check(esm: RenderedResource, model: StackModel): void {
    const consumer = model.sqsConsumer(esm);
    if (consumer === undefined) return;
    const { fn, queue } = consumer;
    const horizon = environmentVariable(fn, DEDUPE_HORIZON_ENV);
    // A sequenced consumer's claims live on its entity items and never expire: nothing to keep a horizon under.
    if (horizon === undefined && environmentVariable(fn, ENV.consumerLedger) === 'sequenced') return;
    const ttl = environmentVariable(fn, ENV.inboxTtlSeconds);
    const consequence =
      'an event redriven after its inbox claim expired would be claimed again and have its effect applied a second time';
    if (horizon === undefined || !/^\d+$/.test(horizon)) {
      this.fail(
        fn,
        `Function ${fn.name} consumes queue ${queue.name} with ${horizon === undefined ? `no ${DEDUPE_HORIZON_ENV}` : `${DEDUPE_HORIZON_ENV} "${horizon}"`}: ` +
          `it needs a whole number of seconds, the oldest event it may apply by itself; without it ${consequence}.`,
      );
      return;
    }
    // The InboxTtl rule reports a missing or malformed TTL.
    if (ttl === undefined || !/^\d+$/.test(ttl)) return;
    const largest = maxHorizonForClaimTtl(Number(ttl));
    if (Number(horizon) > largest) {
      this.fail(
        fn,
        `Function ${fn.name} has ${DEDUPE_HORIZON_ENV} ${horizon}, above its ${ENV.inboxTtlSeconds} ${ttl} minus ` +
          `${DEDUPE_HORIZON_MARGIN_SECONDS} s (clock-skew margin) = ${largest} s: ${consequence}. ` +
          `(This relies on claims expiring the TTL after the later of claim time and occurredAt, and on events ` +
          `stamped more than ${MAX_FUTURE_SKEW_SECONDS} s ahead being refused as OccurredInFuture.) ` +
          `Lower the horizon or raise the TTL (packages/runtime/src/consumer/dedupe-horizon.ts derives both).`,
      );
    }
  }
}
