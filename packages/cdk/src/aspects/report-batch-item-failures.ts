import { CorrectnessAspect } from './correctness-aspect';
import { EVENT_SOURCE_MAPPING, show, type RenderedResource, type StackModel } from './model';

/**
 * Rule ReportBatchItemFailures: every event source mapping (SQS, DynamoDB,
 * Kinesis, or a source that cannot be told) has `FunctionResponseTypes`
 * containing `ReportBatchItemFailures`.
 *
 * Why: without it, one failed record fails the whole batch, and every record
 * that already succeeded is delivered again; the consumers rely on reporting
 * exactly the failed ones. Kafka, Amazon MQ and DocumentDB mappings are
 * skipped: they do not take this setting.
 *
 * @example applyCorrectnessAspects registers it with the others; alone, e.g. in a test of this one rule
 * ```ts
 * Aspects.of(stack).add(new ReportBatchItemFailuresAspect(), { priority: AspectPriority.READONLY });
 * ```
 */
export class ReportBatchItemFailuresAspect extends CorrectnessAspect {
  readonly rule = 'ReportBatchItemFailures' as const;
  protected readonly resourceType = EVENT_SOURCE_MAPPING;

  protected check(esm: RenderedResource, model: StackModel): void {
    if (model.eventSource(esm).kind === 'other') return;
    const types = esm.properties.FunctionResponseTypes;
    if (Array.isArray(types) && types.includes('ReportBatchItemFailures')) return;
    this.fail(
      esm,
      `Event source mapping ${esm.name} has FunctionResponseTypes ${show(types)}, without ReportBatchItemFailures: ` +
        'one failed record would fail the whole batch and redeliver the records that succeeded. ' +
        'Set FunctionResponseTypes to [ReportBatchItemFailures] (reportBatchItemFailures: true) and return the failed ids.',
    );
  }
}
