import { CorrectnessAspect } from './correctness-aspect';
import { EVENT_SOURCE_MAPPING, show, get, numberValue, type RenderedResource, type StackModel } from './model';

/**
 * Rule StreamSource: every event source mapping on a DynamoDB or Kinesis
 * stream has
 * - MaximumRetryAttempts set and not -1: the default (-1) retries a failing
 *   batch until the record expires, blocking its shard for up to the stream's
 *   retention (24 h for DynamoDB) while later records wait;
 * - MaximumRecordAgeInSeconds set and not -1, for the same reason;
 * - BisectBatchOnFunctionError true, so a poison record is isolated instead of
 *   failing (and re-running) its whole batch until the retries run out;
 * - DestinationConfig.OnFailure.Destination set: records given up on are
 *   recorded there, instead of being skipped without a trace.
 * Each missing setting is its own error, on the mapping.
 *
 * @example applyCorrectnessAspects registers it with the others; alone, e.g. in a test of this one rule
 * ```ts
 * Aspects.of(stack).add(new StreamSourceAspect(), { priority: AspectPriority.READONLY });
 * ```
 */
export class StreamSourceAspect extends CorrectnessAspect {
  readonly rule = 'StreamSource' as const;
  protected readonly resourceType = EVENT_SOURCE_MAPPING;

  protected check(esm: RenderedResource, model: StackModel): void {
    const source = model.eventSource(esm);
    if (source.kind !== 'dynamodb' && source.kind !== 'kinesis') return;
    const subject = `Event source mapping ${esm.name} (${source.kind === 'dynamodb' ? 'DynamoDB' : 'Kinesis'} stream ${source.description})`;

    for (const [key, why] of [
      ['MaximumRetryAttempts', 'a failing batch would be retried until its records expire, blocking the shard'],
      ['MaximumRecordAgeInSeconds', 'a failing batch would be retried until its records expire, blocking the shard'],
    ] as const) {
      this.guard(esm, () => {
        const value = esm.properties[key];
        if (value !== undefined && numberValue(value, `${key} of ${esm.name}`) !== -1) return;
        this.fail(
          esm,
          `${subject} has ${key} ${value === undefined ? 'unset' : '-1'} (infinite): ${why}. Set a bounded ${key}.`,
        );
      });
    }

    const bisect = esm.properties.BisectBatchOnFunctionError;
    if (bisect !== true && bisect !== 'true') {
      this.fail(
        esm,
        `${subject} has BisectBatchOnFunctionError ${show(bisect)}: a poison record would fail its whole batch on every retry ` +
          'instead of being isolated. Set BisectBatchOnFunctionError to true.',
      );
    }

    if (get(esm.properties, 'DestinationConfig', 'OnFailure', 'Destination') === undefined) {
      this.fail(
        esm,
        `${subject} has no DestinationConfig.OnFailure.Destination: records dropped after the retries would be lost without a trace. ` +
          'Set an on-failure destination (an SQS queue or SNS topic).',
      );
    }
  }
}
