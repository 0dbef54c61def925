import { isFifoQueue, readNumber, redrivePolicyOf, SQS_QUEUE } from '@exactly-once/cdk/template';
import { resourcesOfType, TemplateError, type CfnTemplate } from './model';

/** An AWS::SQS::Queue as the local runtime creates it in fauxqs. */
export interface QueueDefinition {
  logicalId: string;
  name: string;
  fifo: boolean;
  /** SQS attributes as SetQueueAttributes takes them; the redrive target is a logical id until provisioning. */
  attributes: Record<string, string>;
  redrive?: { deadLetterLogicalId: string; maxReceiveCount: number };
}

/** Properties that map one to one onto SQS queue attributes. */
const PLAIN_ATTRIBUTES = [
  'VisibilityTimeout',
  'MessageRetentionPeriod',
  'DelaySeconds',
  'MaximumMessageSize',
  'ReceiveMessageWaitTimeSeconds',
  'ContentBasedDeduplication',
  'DeduplicationScope',
  'FifoThroughputLimit',
] as const;

/**
 * Reads every AWS::SQS::Queue: FIFO, content-based dedup, visibility,
 * retention, delay, redrive policy. Encryption settings mean nothing locally.
 * A queue without a QueueName gets its logical id (plus `.fifo` for FIFO),
 * as CloudFormation would generate a name.
 */
export function queueDefinitions(template: CfnTemplate): QueueDefinition[] {
  return resourcesOfType(template, SQS_QUEUE).map(([logicalId, resource]) => {
    const p = resource.Properties ?? {};
    const fifo = isFifoQueue(p);
    if (fifo === undefined)
      throw new TemplateError(`Queue ${logicalId}: FifoQueue is not a boolean known at synth time`);
    const name = typeof p.QueueName === 'string' ? p.QueueName : `${logicalId}${fifo ? '.fifo' : ''}`;
    const attributes: Record<string, string> = {};
    if (fifo) attributes.FifoQueue = 'true';
    for (const key of PLAIN_ATTRIBUTES) if (p[key] !== undefined) attributes[key] = String(p[key]);
    return { logicalId, name, fifo, attributes, redrive: redriveOf(logicalId, p) };
  });
}

function redriveOf(logicalId: string, properties: Record<string, unknown>): QueueDefinition['redrive'] {
  if (properties.RedrivePolicy === undefined) return undefined;
  const policy = redrivePolicyOf(properties);
  const maxReceiveCount = readNumber(policy?.maxReceiveCount);
  if (policy?.targetLogicalId === undefined || maxReceiveCount === undefined) {
    throw new TemplateError(
      `Queue ${logicalId}: only a redrive policy to a dead-letter queue of the same stack (Fn::GetAtt Queue.Arn), ` +
        'with a maxReceiveCount known at synth time, can be emulated',
    );
  }
  return { deadLetterLogicalId: policy.targetLogicalId, maxReceiveCount };
}

/** Dead-letter queues first, so each redrive target exists when its source is created. */
export function creationOrder(queues: QueueDefinition[]): QueueDefinition[] {
  const byId = new Map(queues.map((q) => [q.logicalId, q]));
  const ordered: QueueDefinition[] = [];
  const visit = (q: QueueDefinition, depth: number): void => {
    if (ordered.includes(q)) return;
    if (depth > queues.length) throw new TemplateError(`Queue ${q.logicalId}: redrive policies form a cycle`);
    const target = q.redrive && byId.get(q.redrive.deadLetterLogicalId);
    if (q.redrive && target === undefined)
      throw new TemplateError(
        `Queue ${q.logicalId}: dead-letter queue ${q.redrive.deadLetterLogicalId} is not an SQS queue of the stack`,
      );
    if (target) visit(target, depth + 1);
    ordered.push(q);
  };
  queues.forEach((q) => visit(q, 0));
  return ordered;
}
