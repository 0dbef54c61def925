import {
  arnTemplate,
  parseJson,
  readBoolean,
  referencedAttribute,
  referencedLogicalId,
  referencedLogicalIds,
  show,
} from './values';

/**
 * The readings of a synthesized stack that both the correctness aspects and
 * the local runtime make: which queue is a queue's dead-letter queue, what an
 * event source mapping reads and which function it invokes, whether a queue is
 * FIFO. One implementation, so the runtime emulates the wiring the aspects
 * vouched for. Each answers with logical ids and leaves the error to its
 * caller (the aspects report "cannot verify", the runtime refuses to start).
 */

export const SQS_QUEUE = 'AWS::SQS::Queue';
export const LAMBDA_FUNCTION = 'AWS::Lambda::Function';
export const LAMBDA_ALIAS = 'AWS::Lambda::Alias';
export const LAMBDA_VERSION = 'AWS::Lambda::Version';
export const EVENT_SOURCE_MAPPING = 'AWS::Lambda::EventSourceMapping';
export const DYNAMODB_TABLE = 'AWS::DynamoDB::Table';
export const CLOUDWATCH_ALARM = 'AWS::CloudWatch::Alarm';

/** One resource as the template spells it. */
export interface TemplateResource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
}

/** The resources of one template, by logical id. */
export interface ResourceLookup {
  get(logicalId: string): TemplateResource | undefined;
  ofType(type: string): [string, TemplateResource][];
  /** A readable name for messages (a construct path), else the logical id. */
  name(logicalId: string): string;
}

/** A lookup over a template's `Resources`. */
export function templateLookup(
  resources: Readonly<Record<string, TemplateResource>>,
  name: (logicalId: string) => string = (id) => id,
): ResourceLookup {
  return {
    get: (id) => resources[id],
    ofType: (type) => Object.entries(resources).filter(([, r]) => r.Type === type),
    name,
  };
}

/** A queue's RedrivePolicy: its target as written, the target's logical id when it refers to a resource, and the count. */
export interface RedrivePolicyReading {
  readonly target: unknown;
  readonly targetLogicalId?: string;
  readonly maxReceiveCount: unknown;
}

/** The redrive policy of a queue's properties, or undefined when it has none (or none that parses). */
export function redrivePolicyOf(queue: Readonly<Record<string, unknown>>): RedrivePolicyReading | undefined {
  const policy = parseJson(queue.RedrivePolicy);
  if (policy === undefined) return undefined;
  return {
    target: policy.deadLetterTargetArn,
    targetLogicalId: referencedLogicalId(policy.deadLetterTargetArn),
    maxReceiveCount: policy.maxReceiveCount,
  };
}

/** Whether a queue is FIFO: unset is standard; undefined when the value cannot be read at synth time. */
export function isFifoQueue(queue: Readonly<Record<string, unknown>>): boolean | undefined {
  return queue.FifoQueue === undefined ? false : readBoolean(queue.FifoQueue);
}

/** What an event source mapping reads, by the logical id of a resource of this template where it is one. */
export type EventSourceReading =
  | { readonly kind: 'sqs'; readonly logicalId: string }
  | { readonly kind: 'dynamodb' | 'kinesis'; readonly logicalId?: string; readonly description: string }
  /** An SQS queue, or a source whose type cannot be told, that is not defined in this template. */
  | { readonly kind: 'unresolved'; readonly service?: string; readonly description: string }
  /** Kafka, Amazon MQ, DocumentDB, or another resource of this template. */
  | { readonly kind: 'other'; readonly description: string };

/** What an event source mapping (its properties) reads from. */
export function eventSourceOf(esm: Readonly<Record<string, unknown>>, lookup: ResourceLookup): EventSourceReading {
  const arn = esm.EventSourceArn;
  if (arn === undefined) {
    return esm.SelfManagedEventSource !== undefined
      ? { kind: 'other', description: 'self-managed Kafka' }
      : { kind: 'unresolved', description: 'no EventSourceArn' };
  }
  const logicalId = referencedLogicalId(arn);
  const resource = logicalId === undefined ? undefined : lookup.get(logicalId);
  if (logicalId !== undefined && resource !== undefined) {
    const name = lookup.name(logicalId);
    if (resource.Type === SQS_QUEUE) return { kind: 'sqs', logicalId };
    if (
      (resource.Type === DYNAMODB_TABLE || resource.Type === 'AWS::DynamoDB::GlobalTable') &&
      referencedAttribute(arn) === 'StreamArn'
    ) {
      return { kind: 'dynamodb', logicalId, description: `of ${name}` };
    }
    if (resource.Type === 'AWS::Kinesis::Stream' || resource.Type === 'AWS::Kinesis::StreamConsumer') {
      return { kind: 'kinesis', logicalId, description: name };
    }
    return { kind: 'other', description: `${resource.Type} ${name}` };
  }
  // Not in this template: tell the service from the ARN text (literal, or the literal parts of an Fn::Join).
  const service = /^arn:[^:]*:([a-z0-9-]+):/.exec(arnTemplate(arn))?.[1];
  const description = show(arn);
  if (service === 'dynamodb' || service === 'kinesis') return { kind: service, description };
  if (service === 'kafka' || service === 'mq' || service === 'rds') return { kind: 'other', description };
  return { kind: 'unresolved', service, description };
}

/**
 * The functions of this template a value names (an event source mapping's
 * FunctionName, an integration URI, a schedule's target), following an alias
 * or a version to its function: L2 aliases render their name as an expression
 * over the alias ARN, so every reference inside the value is followed. One
 * function for a value that names one; none or several otherwise.
 */
export function functionsNamedBy(value: unknown, lookup: ResourceLookup): string[] {
  const functions = new Set<string>();
  const follow = (v: unknown, depth: number): void => {
    for (const id of referencedLogicalIds(v)) {
      const resource = lookup.get(id);
      if (resource?.Type === LAMBDA_FUNCTION) functions.add(id);
      else if ((resource?.Type === LAMBDA_ALIAS || resource?.Type === LAMBDA_VERSION) && depth < 3) {
        follow(resource.Properties?.FunctionName, depth + 1);
      }
    }
  };
  follow(value, 0);
  return [...functions];
}
