import { CfnResource, Stack } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import {
  EVENT_SOURCE_MAPPING,
  eventSourceOf,
  functionsNamedBy,
  get,
  isFifoQueue,
  isRecord,
  LAMBDA_FUNCTION,
  parseJson,
  readNumber,
  redrivePolicyOf,
  referencedLogicalId,
  show,
  SQS_QUEUE,
  CLOUDWATCH_ALARM,
  type ResourceLookup,
  type TemplateResource,
} from '../template';

export {
  EVENT_SOURCE_MAPPING,
  get,
  isRecord,
  LAMBDA_ALIAS,
  LAMBDA_FUNCTION,
  LAMBDA_VERSION,
  parseJson,
  referencedLogicalId,
  show,
  SQS_QUEUE,
} from '../template';

/**
 * A read-only view of one stack's CloudFormation resources, as the template
 * will render them, for the correctness aspects.
 *
 * Why rendered CloudFormation and not L2 props: the aspects must catch a
 * misconfiguration however it was made (L2 props, L1 props, escape-hatch
 * overrides such as `addPropertyOverride`). Only the rendered resource
 * reflects all of them, so each resource is rendered with
 * `CfnResource._toCloudFormation()` (what synth itself calls) and resolved with
 * `Stack.of(x).resolve()`. References then look like `{ Ref: id }` or
 * `{ 'Fn::GetAtt': [id, attr] }`, and `id` is looked up among the resources of
 * the same stack. The checks run after references are prepared, so a
 * reference to another stack has become an import or a stack output by then
 * and cannot be mistaken for a resource of this one; like an imported
 * resource's literal ARN or a parameter, it is reported as unverifiable
 * rather than guessed at. What a reference, a redrive policy or an event source
 * means is read by `packages/cdk/src/template`, which the local runtime reads
 * its template with too.
 */

/** Service defaults that apply when a property is not set. */
export const SQS_DEFAULT_VISIBILITY_TIMEOUT_SECONDS = 30;
export const SQS_DEFAULT_RETENTION_SECONDS = 345_600; // 4 days
export const LAMBDA_DEFAULT_TIMEOUT_SECONDS = 3;

export interface RenderedResource {
  readonly construct: CfnResource;
  readonly logicalId: string;
  readonly type: string;
  readonly properties: Record<string, unknown>;
  /** Construct path without the trailing `/Resource` of L2-owned resources, for messages. */
  readonly name: string;
}

/**
 * Something a check needs cannot be read at synth time (an unresolved token,
 * an imported resource). Thrown by the model and the checks, caught by
 * `CorrectnessAspect`, which reports it instead of crashing.
 *
 * @example A check that cannot read a value says so, and the aspect reports it (error or warning)
 * ```ts
 * const visibility = queue.properties.VisibilityTimeout; // as rendered: a number, or an intrinsic such as { Ref: ... }
 * if (typeof visibility !== 'number') throw new Unverifiable(`VisibilityTimeout of ${queue.name} is not known at synth time`);
 * ```
 */
export class Unverifiable extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'Unverifiable';
  }
}

/** How an event source mapping's `EventSourceArn` was classified. */
export type EventSource =
  | { kind: 'sqs'; queue: RenderedResource }
  | { kind: 'dynamodb' | 'kinesis'; resource?: RenderedResource; description: string }
  /** An SQS queue, or a source whose type cannot be told, that is not defined in this stack. */
  | { kind: 'unresolved'; service?: string; description: string }
  /** Kafka, Amazon MQ, DocumentDB, or another resource of this stack: the rules skip them. */
  | { kind: 'other'; description: string };

/** How a resource refers to a queue as a place for failed messages, and why that makes it a DLQ. */
interface DeadLetterReference {
  readonly type: string;
  readonly why: string;
  readonly targets: (properties: Record<string, unknown>) => unknown[];
}

/**
 * A queue counts as a dead-letter queue (and so needs no dead-letter queue of
 * its own) when this stack uses it as a place where failed messages end up:
 * - the target of some queue's RedrivePolicy (or an SNS subscription's);
 * - a function's DeadLetterConfig (failed async invocations);
 * - the on-failure destination of an event source mapping or of a function's
 *   async invoke config;
 * - the dead-letter config of an EventBridge rule target or a Scheduler schedule;
 * - or it declares itself one with a RedriveAllowPolicy that allows some
 *   source (`allowAll`/`byQueue`): the way to mark a DLQ whose source queues
 *   live outside this stack. `denyAll` says the opposite, so it does not count.
 * Anything else is a source queue: failures in its consumers must end somewhere.
 */
const DEAD_LETTER_REFERENCES: DeadLetterReference[] = [
  { type: SQS_QUEUE, why: 'redrive target', targets: (p) => [redrivePolicyOf(p)?.target] },
  { type: 'AWS::SNS::Subscription', why: 'SNS redrive target', targets: (p) => [redrivePolicyOf(p)?.target] },
  {
    type: LAMBDA_FUNCTION,
    why: 'function DeadLetterConfig',
    targets: (p) => [get(p, 'DeadLetterConfig', 'TargetArn')],
  },
  {
    type: EVENT_SOURCE_MAPPING,
    why: 'on-failure destination',
    targets: (p) => [get(p, 'DestinationConfig', 'OnFailure', 'Destination')],
  },
  {
    type: 'AWS::Lambda::EventInvokeConfig',
    why: 'async on-failure destination',
    targets: (p) => [get(p, 'DestinationConfig', 'OnFailure', 'Destination')],
  },
  {
    type: 'AWS::Events::Rule',
    why: 'rule target DeadLetterConfig',
    targets: (p) => (Array.isArray(p.Targets) ? p.Targets.map((t) => get(t, 'DeadLetterConfig', 'Arn')) : []),
  },
  {
    type: 'AWS::Scheduler::Schedule',
    why: 'schedule DeadLetterConfig',
    targets: (p) => [get(p, 'Target', 'DeadLetterConfig', 'Arn')],
  },
];

export class StackModel {
  /** Logical id → construct; rendered only when a check needs it (most resources never are). */
  private readonly constructsById = new Map<string, CfnResource>();
  private readonly renderedCache = new Map<CfnResource, RenderedResource | undefined>();
  /** Logical id of each dead-letter queue → why it counts as one. */
  private readonly deadLetterQueues = new Map<string, string>();

  /** The stack seen as a template (for the shared readers), rendering only the resources asked for. */
  readonly lookup: ResourceLookup = {
    get: (id) => {
      const resource = this.byLogicalId(id);
      return resource === undefined ? undefined : asTemplateResource(resource);
    },
    ofType: (type) => this.resourcesOfType(type).map((r) => [r.logicalId, asTemplateResource(r)]),
    name: (id) => this.byLogicalId(id)?.name ?? id,
  };

  constructor(readonly stack: Stack) {
    for (const construct of stack.node.findAll()) {
      // Nested stacks are stacks of their own: their resources get their own model.
      if (!CfnResource.isCfnResource(construct) || Stack.of(construct) !== stack) continue;
      const logicalId: unknown = stack.resolve(construct.logicalId);
      if (typeof logicalId === 'string') this.constructsById.set(logicalId, construct);
    }
    const referenceTypes = new Set(DEAD_LETTER_REFERENCES.map((r) => r.type));
    for (const construct of this.constructsById.values()) {
      if (!referenceTypes.has(construct.cfnResourceType)) continue;
      const resource = this.resource(construct);
      if (resource === undefined) continue;
      for (const ref of DEAD_LETTER_REFERENCES.filter((r) => r.type === resource.type)) {
        for (const target of ref.targets(resource.properties)) {
          const queue = this.referenced(target, SQS_QUEUE);
          if (queue !== undefined && !this.deadLetterQueues.has(queue.logicalId)) {
            this.deadLetterQueues.set(queue.logicalId, `${ref.why} of ${resource.name}`);
          }
        }
      }
      const permission = parseJson(resource.properties.RedriveAllowPolicy)?.redrivePermission;
      if (resource.type === SQS_QUEUE && (permission === 'allowAll' || permission === 'byQueue')) {
        this.deadLetterQueues.set(resource.logicalId, `RedriveAllowPolicy ${permission}`);
      }
    }
  }

  /** Whether the model was built after this construct was added to the tree. */
  knows(construct: IConstruct): boolean {
    return (
      !CfnResource.isCfnResource(construct) ||
      Stack.of(construct) !== this.stack ||
      this.constructsById.has(this.stack.resolve(construct.logicalId))
    );
  }

  /** The rendered form of a resource of this stack, or undefined if it is not a (renderable) CfnResource of it. */
  resource(construct: IConstruct): RenderedResource | undefined {
    if (!CfnResource.isCfnResource(construct) || Stack.of(construct) !== this.stack) return undefined;
    if (!this.renderedCache.has(construct)) this.renderedCache.set(construct, render(this.stack, construct));
    return this.renderedCache.get(construct);
  }

  /** The rendered resources of this stack of one CloudFormation type. */
  resourcesOfType(type: string): RenderedResource[] {
    return [...this.constructsById.values()]
      .filter((c) => c.cfnResourceType === type)
      .map((c) => this.resource(c))
      .filter((r): r is RenderedResource => r !== undefined);
  }

  byLogicalId(id: string | undefined): RenderedResource | undefined {
    const construct = id === undefined ? undefined : this.constructsById.get(id);
    return construct === undefined ? undefined : this.resource(construct);
  }

  /**
   * The resource of the given type that a resolved `{ Ref }` or
   * `{ 'Fn::GetAtt' }` points at, or undefined (a literal, a parameter, another
   * stack's resource, another type).
   */
  referenced(value: unknown, type: string): RenderedResource | undefined {
    const resource = this.byLogicalId(referencedLogicalId(value));
    return resource?.type === type ? resource : undefined;
  }

  /** This stack's CloudWatch alarms on an `AWS/SQS` metric of `queue` (its `QueueName` dimension). */
  queueAlarms(queue: RenderedResource, metricName: string): RenderedResource[] {
    return this.resourcesOfType(CLOUDWATCH_ALARM).filter((alarm) => {
      const { Namespace, MetricName, Dimensions } = alarm.properties;
      return (
        Namespace === 'AWS/SQS' &&
        MetricName === metricName &&
        Array.isArray(Dimensions) &&
        Dimensions.some(
          (d: { Name?: unknown; Value?: unknown }) =>
            d.Name === 'QueueName' && this.referenced(d.Value, SQS_QUEUE)?.logicalId === queue.logicalId,
        )
      );
    });
  }

  /** Why the queue counts as a dead-letter queue, or undefined if it is a source queue. */
  deadLetterReason(queue: RenderedResource): string | undefined {
    return this.deadLetterQueues.get(queue.logicalId);
  }

  /**
   * The dead-letter queue named by a queue's RedrivePolicy: undefined when it
   * has no redrive policy; Unverifiable when the target is not a queue of this stack.
   */
  deadLetterQueueOf(queue: RenderedResource): { dlq: RenderedResource; maxReceiveCount: unknown } | undefined {
    const policy = redrivePolicyOf(queue.properties);
    if (policy === undefined) return undefined;
    const dlq = this.byLogicalId(policy.targetLogicalId);
    if (dlq?.type !== SQS_QUEUE) {
      throw new Unverifiable(
        `the dead-letter queue of ${queue.name} (${show(policy.target)}) is not a queue defined in this stack`,
      );
    }
    return { dlq, maxReceiveCount: policy.maxReceiveCount };
  }

  /** The function an event source mapping invokes, following an alias or a version to its function. */
  targetFunction(esm: RenderedResource): RenderedResource {
    const value = esm.properties.FunctionName;
    const functions = functionsNamedBy(value, this.lookup);
    const fn = functions.length === 1 ? this.byLogicalId(functions[0]) : undefined;
    if (fn === undefined) {
      throw new Unverifiable(`the function of ${esm.name} (${show(value)}) is not a function defined in this stack`);
    }
    return fn;
  }

  /**
   * The SQS queue an event source mapping reads and the function it invokes;
   * undefined when it reads something else (a stream, Kafka...). Unverifiable
   * when the source may be a queue but is not one of this stack.
   */
  sqsConsumer(esm: RenderedResource): { queue: RenderedResource; fn: RenderedResource } | undefined {
    const source = this.eventSource(esm);
    if (source.kind === 'unresolved') {
      throw new Unverifiable(`its event source (${source.description}) is not a queue defined in this stack`);
    }
    if (source.kind !== 'sqs') return undefined;
    return { queue: source.queue, fn: this.targetFunction(esm) };
  }

  /** What an event source mapping reads from. */
  eventSource(esm: RenderedResource): EventSource {
    const source = eventSourceOf(esm.properties, this.lookup);
    // The reader found the queue through this.lookup, so it is a rendered resource of this stack.
    if (source.kind === 'sqs') return { kind: 'sqs', queue: this.byLogicalId(source.logicalId)! };
    if (source.kind === 'dynamodb' || source.kind === 'kinesis') {
      return { kind: source.kind, resource: this.byLogicalId(source.logicalId), description: source.description };
    }
    return source;
  }
}

function asTemplateResource(resource: RenderedResource): TemplateResource {
  return { Type: resource.type, Properties: resource.properties };
}

/**
 * One model per stack, shared by the aspects registered together, built the
 * first time one of their checks runs: in synth's validation phase, when the
 * tree no longer changes. Should a resource appear later anyway, the model is rebuilt.
 *
 * @example Two aspects registered together read one model of each stack
 * ```ts
 * const models = new StackModels();
 * Aspects.of(this).add(new InboxTtlAspect({ models }), { priority: AspectPriority.READONLY });
 * Aspects.of(this).add(new DedupeHorizonAspect({ models }), { priority: AspectPriority.READONLY });
 * ```
 */
export class StackModels {
  private readonly models = new Map<Stack, StackModel>();

  of(construct: IConstruct): StackModel {
    const stack = Stack.of(construct);
    let model = this.models.get(stack);
    if (model === undefined || !model.knows(construct)) {
      model = new StackModel(stack);
      this.models.set(stack, model);
    }
    return model;
  }
}

function render(stack: Stack, resource: CfnResource): RenderedResource | undefined {
  let template: unknown;
  try {
    template = stack.resolve(resource._toCloudFormation());
  } catch {
    // A resource that cannot render fails synth on its own, with CDK's message.
    return undefined;
  }
  const resources =
    (template as { Resources?: Record<string, { Type?: unknown; Properties?: unknown }> }).Resources ?? {};
  const [logicalId, body] = Object.entries(resources)[0] ?? [];
  if (logicalId === undefined || body === undefined) return undefined;
  return {
    construct: resource,
    logicalId,
    type: typeof body.Type === 'string' ? body.Type : resource.cfnResourceType,
    properties: isRecord(body.Properties) ? body.Properties : {},
    name: resource.node.path.replace(/\/Resource$/, ''),
  };
}

/**
 * A numeric property, with the service default when it is unset. CloudFormation
 * accepts numbers as strings too. Anything else (a token left unresolved, an
 * intrinsic function) cannot be judged at synth time.
 */
export function seconds(resource: RenderedResource, key: string, fallback: number): number {
  return numberValue(resource.properties[key], `${key} of ${resource.name}`, fallback);
}

export function numberValue(value: unknown, what: string, fallback?: number): number {
  if (value === undefined && fallback !== undefined) return fallback;
  const number = readNumber(value);
  if (number !== undefined) return number;
  throw new Unverifiable(`${what} is ${show(value)}, not a number known at synth time`);
}

/**
 * A function's environment variable as trimmed text, or undefined when it is
 * not set. Unverifiable when its value is not known at synth time.
 */
export function environmentVariable(fn: RenderedResource, name: string): string | undefined {
  const value = get(fn.properties, 'Environment', 'Variables', name);
  if (value === undefined) return undefined;
  if (typeof value !== 'string' && typeof value !== 'number') {
    throw new Unverifiable(`${name} of ${fn.name} is ${show(value)}, not a value known at synth time`);
  }
  return String(value).trim();
}

export function isFifo(queue: RenderedResource): boolean {
  const fifo = isFifoQueue(queue.properties);
  if (fifo !== undefined) return fifo;
  throw new Unverifiable(
    `FifoQueue of ${queue.name} is ${show(queue.properties.FifoQueue)}, not a boolean known at synth time`,
  );
}
