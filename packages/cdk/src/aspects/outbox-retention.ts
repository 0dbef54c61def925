import { OUTBOX_TTL_ATTRIBUTE, STREAM_RETENTION_SECONDS } from '@exactly-once/runtime/aws/outbox-table';
import { ENV } from '@exactly-once/runtime/env-names';
import { CorrectnessAspect } from './correctness-aspect';
import {
  environmentVariable,
  get,
  LAMBDA_FUNCTION,
  Unverifiable,
  show,
  type RenderedResource,
  type StackModel,
} from './model';
import { DYNAMODB_TABLE } from '../template';

/**
 * Rule OutboxRetention: every function that marks outbox items dispatched (it has
 * `OUTBOX_TABLE_NAME`: the relay and the sweeper)
 * - keeps a dispatched item at least as long as the stream keeps its record (24 h):
 *   `OUTBOX_DISPATCHED_RETENTION_SECONDS`, a whole number >= 86400. A redelivered stream record
 *   marks its item dispatched again, and an item already deleted would fail that mark;
 * - writes to a table whose TTL attribute is OUTBOX_TTL_ATTRIBUTE, enabled: otherwise the TTL the
 *   functions set is never acted on, and dispatched items are kept forever.
 * Errors are on the function; a table not defined in this stack cannot be checked (Unverifiable).
 *
 * @example applyCorrectnessAspects registers it with the others; alone, e.g. in a test of this one rule
 * ```ts
 * Aspects.of(stack).add(new OutboxRetentionAspect(), { priority: AspectPriority.READONLY });
 * ```
 */
export class OutboxRetentionAspect extends CorrectnessAspect {
  readonly rule = 'OutboxRetention' as const;
  protected readonly resourceType = LAMBDA_FUNCTION;

  protected check(fn: RenderedResource, model: StackModel): void {
    const reference = get(fn.properties, 'Environment', 'Variables', ENV.outboxTable);
    if (reference === undefined) return;
    const name = ENV.outboxDispatchedRetentionSeconds;
    const retention = environmentVariable(fn, name);
    if (retention === undefined || !/^\d+$/.test(retention) || Number(retention) < STREAM_RETENTION_SECONDS) {
      this.fail(
        fn,
        `Function ${fn.name} marks outbox items dispatched but has ${name} ${retention === undefined ? 'unset' : `"${retention}"`}: ` +
          `a dispatched item must be kept at least as long as the stream keeps its record (${STREAM_RETENTION_SECONDS} s), ` +
          `and must expire at some point. Set ${name} to a whole number of seconds, at least ${STREAM_RETENTION_SECONDS} ` +
          "(OutboxRelay's dispatchedRetention).",
      );
    }
    this.guard(fn, () => {
      const table = model.referenced(reference, DYNAMODB_TABLE);
      if (table === undefined)
        throw new Unverifiable(
          `the outbox table of ${fn.name} (${show(reference)}) is not a table defined in this stack`,
        );
      const ttl = table.properties.TimeToLiveSpecification as
        { AttributeName?: unknown; Enabled?: unknown } | undefined;
      if (ttl?.AttributeName === OUTBOX_TTL_ATTRIBUTE && (ttl.Enabled === true || ttl.Enabled === 'true')) return;
      this.fail(
        fn,
        `Table ${table.name}, where ${fn.name} marks outbox items dispatched, has TimeToLiveSpecification ${show(ttl)}: ` +
          `the TTL set on dispatched items (${OUTBOX_TTL_ATTRIBUTE}) is never acted on, so they are kept forever. ` +
          `Set the table's TTL attribute to ${OUTBOX_TTL_ATTRIBUTE} (timeToLiveAttribute).`,
      );
    });
  }
}
