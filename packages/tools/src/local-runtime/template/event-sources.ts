import {
  DYNAMODB_TABLE,
  EVENT_SOURCE_MAPPING,
  eventSourceOf,
  readBoolean,
  templateLookup,
  type EventSourceReading,
} from '@exactly-once/cdk/template';
import { functionLogicalIdIn } from './lambda';
import { numberProperty, resourcesOfType, TemplateError, type CfnTemplate } from './model';

interface Common {
  logicalId: string;
  functionLogicalId: string;
  batchSize: number;
  batchingWindowSeconds: number;
  reportBatchItemFailures: boolean;
  /** FilterCriteria patterns, parsed; a record is delivered when any pattern matches. */
  filters: unknown[];
  enabled: boolean;
}

export interface SqsSourceDefinition extends Common {
  kind: 'sqs';
  queueLogicalId: string;
  maximumConcurrency?: number;
}

export interface StreamSourceDefinition extends Common {
  kind: 'dynamodb';
  tableLogicalId: string;
  startingPosition: 'TRIM_HORIZON' | 'LATEST';
  bisectOnError: boolean;
  /** -1: until the record expires. */
  maximumRetryAttempts: number;
  /** -1: no limit. */
  maximumRecordAgeSeconds: number;
  /** Unresolved template value of DestinationConfig.OnFailure.Destination. */
  onFailureDestination?: unknown;
}

export type EventSourceDefinition = SqsSourceDefinition | StreamSourceDefinition;

/**
 * Reads every AWS::Lambda::EventSourceMapping whose source is a queue or a
 * table stream of the same stack, with Lambda's documented defaults.
 * Returns the ones it cannot run separately, with the reason.
 */
export function eventSourceDefinitions(template: CfnTemplate): {
  sources: EventSourceDefinition[];
  unsupported: { logicalId: string; reason: string }[];
} {
  const sources: EventSourceDefinition[] = [];
  const unsupported: { logicalId: string; reason: string }[] = [];
  const lookup = templateLookup(template.Resources);
  for (const [logicalId, resource] of resourcesOfType(template, EVENT_SOURCE_MAPPING)) {
    const p = resource.Properties ?? {};
    const functionLogicalId = functionLogicalIdIn(p.FunctionName, template);
    const source = eventSourceOf(p, lookup);
    const where = `Event source mapping ${logicalId}`;
    if (functionLogicalId === undefined) {
      unsupported.push({ logicalId, reason: 'its function is not a Lambda function of this stack' });
      continue;
    }
    const common = {
      logicalId,
      functionLogicalId,
      reportBatchItemFailures: ((p.FunctionResponseTypes as string[] | undefined) ?? []).includes(
        'ReportBatchItemFailures',
      ),
      filters: parseFilters(logicalId, p.FilterCriteria),
      enabled: readBoolean(p.Enabled) !== false,
    };
    if (source.kind === 'sqs') {
      const scaling = p.ScalingConfig as { MaximumConcurrency?: unknown } | undefined;
      sources.push({
        ...common,
        kind: 'sqs',
        batchingWindowSeconds: numberProperty(p, 'MaximumBatchingWindowInSeconds', 0, where),
        queueLogicalId: source.logicalId,
        batchSize: numberProperty(p, 'BatchSize', 10, where),
        maximumConcurrency:
          scaling?.MaximumConcurrency === undefined
            ? undefined
            : numberProperty(scaling, 'MaximumConcurrency', 0, `${where} ScalingConfig`),
      });
    } else if (
      source.kind === 'dynamodb' &&
      source.logicalId !== undefined &&
      template.Resources[source.logicalId]?.Type === DYNAMODB_TABLE
    ) {
      const onFailure = (p.DestinationConfig as { OnFailure?: { Destination?: unknown } } | undefined)?.OnFailure
        ?.Destination;
      const position = String(p.StartingPosition ?? 'LATEST');
      if (position !== 'TRIM_HORIZON' && position !== 'LATEST') {
        unsupported.push({ logicalId, reason: `starting position ${position} (only TRIM_HORIZON and LATEST)` });
        continue;
      }
      if (p.TumblingWindowInSeconds !== undefined) {
        unsupported.push({ logicalId, reason: 'tumbling windows' });
        continue;
      }
      sources.push({
        ...common,
        kind: 'dynamodb',
        batchingWindowSeconds: numberProperty(p, 'MaximumBatchingWindowInSeconds', 0, where),
        tableLogicalId: source.logicalId,
        batchSize: numberProperty(p, 'BatchSize', 100, where),
        startingPosition: position,
        bisectOnError: readBoolean(p.BisectBatchOnFunctionError) === true,
        maximumRetryAttempts: numberProperty(p, 'MaximumRetryAttempts', -1, where),
        maximumRecordAgeSeconds: numberProperty(p, 'MaximumRecordAgeInSeconds', -1, where),
        onFailureDestination: onFailure,
      });
    } else {
      unsupported.push({
        logicalId,
        reason: `source ${sourceDescription(source)} (only SQS queues and DynamoDB table streams of this stack)`,
      });
    }
  }
  return { sources, unsupported };
}

function parseFilters(logicalId: string, criteria: unknown): unknown[] {
  const filters = (criteria as { Filters?: { Pattern?: unknown }[] } | undefined)?.Filters ?? [];
  return filters.map((f, i) => {
    if (typeof f.Pattern !== 'string')
      throw new TemplateError(`Event source mapping ${logicalId}: filter ${i} has no Pattern string`);
    try {
      return JSON.parse(f.Pattern) as unknown;
    } catch {
      throw new TemplateError(`Event source mapping ${logicalId}: filter ${i} is not valid JSON: ${f.Pattern}`);
    }
  });
}

function sourceDescription(source: EventSourceReading): string {
  return 'description' in source ? `${source.kind} ${source.description}` : source.kind;
}
