import { CorrectnessAspect } from './correctness-aspect';
import { EVENT_SOURCE_MAPPING, show, type RenderedResource, type StackModel } from './model';

const SQS_QUEUE_POLICY = 'AWS::SQS::QueuePolicy';

/**
 * Rule QueueSenders: every SQS queue a function consumes through an event source mapping, and that
 * queue's dead-letter queue, has a queue policy that denies `sqs:SendMessage` (or `sqs:*`) to every
 * principal (`*`) whose `aws:PrincipalArn` is not in a named list (ArnNotEquals / ArnNotLike): for
 * the queue its producers and an operator role (allowOnlySenders does it), for the DLQ its consumer
 * and the operator roles (allowOnlyDeadLetterSenders).
 *
 * Why: a consumer dedupes on the producer's `eventId`. A principal that may send to the queue can
 * forge a message under a real event's id, and if it arrives first the real event meets a claim it
 * did not write: caught as EventIdReused, but only after the fact. The channel itself must be
 * authenticated, and so must the DLQ: a redrive moves its messages into the guarded queue as an
 * operator role, so a forger who can send to the DLQ gets in through the next redrive. The error is
 * on the mapping.
 *
 * @example applyCorrectnessAspects registers it with the others; alone, e.g. in a test of this one rule
 * ```ts
 * Aspects.of(stack).add(new QueueSendersAspect(), { priority: AspectPriority.READONLY });
 * ```
 */
export class QueueSendersAspect extends CorrectnessAspect {
  readonly rule = 'QueueSenders' as const;
  protected readonly resourceType = EVENT_SOURCE_MAPPING;

  protected check(esm: RenderedResource, model: StackModel): void {
    const consumer = model.sqsConsumer(esm);
    if (consumer === undefined) return;
    const { queue, fn } = consumer;
    if (!guarded(queue, model))
      this.fail(
        esm,
        `Queue ${queue.name}, consumed by ${fn.name}, lets any principal with sqs:SendMessage send to it (no policy statement ` +
          `denies SendMessage to principals outside a named list, e.g. ${show({ ArnNotEquals: { 'aws:PrincipalArn': ['<producer role ARNs>'] } })}): ` +
          'a forged message under a real eventId could reach the consumer before the real event. ' +
          'Restrict it to its producers and an operator role (allowOnlySenders, packages/cdk/src/queue-senders.ts).',
      );
    // No DLQ at all is the DeadLetterQueue rule's finding, not this one's.
    const dlq = model.deadLetterQueueOf(queue)?.dlq;
    if (dlq !== undefined && !guarded(dlq, model))
      this.fail(
        esm,
        `Dead-letter queue ${dlq.name} of ${queue.name}, consumed by ${fn.name}, lets any principal with sqs:SendMessage send to it ` +
          `(no policy statement denies SendMessage to principals outside a named list, e.g. ${show({ ArnNotEquals: { 'aws:PrincipalArn': ['<consumer role ARN>', '<operator role ARNs>'] } })}): ` +
          'a forged message put there is moved into the guarded queue by the next redrive. ' +
          'Restrict it to its consumer and the operator roles (allowOnlyDeadLetterSenders, packages/cdk/src/queue-senders.ts).',
      );
  }
}

function guarded(queue: RenderedResource, model: StackModel): boolean {
  return model
    .resourcesOfType(SQS_QUEUE_POLICY)
    .filter((policy) => policyQueues(policy, model).includes(queue.logicalId))
    .some((policy) => statementsOf(policy).some(deniesOtherSenders));
}

function policyQueues(policy: RenderedResource, model: StackModel): string[] {
  const queues = policy.properties.Queues;
  if (!Array.isArray(queues)) return [];
  return queues
    .map((ref) => model.referenced(ref, 'AWS::SQS::Queue')?.logicalId)
    .filter((id): id is string => id !== undefined);
}

function statementsOf(policy: RenderedResource): Record<string, unknown>[] {
  const document = policy.properties.PolicyDocument as { Statement?: unknown } | undefined;
  const statements = document?.Statement;
  return Array.isArray(statements) ? (statements as Record<string, unknown>[]) : [];
}

function deniesOtherSenders(statement: Record<string, unknown>): boolean {
  if (statement.Effect !== 'Deny') return false;
  const principal = statement.Principal as unknown;
  const everyone = principal === '*' || (principal as { AWS?: unknown } | undefined)?.AWS === '*';
  const actions = ([] as unknown[]).concat(statement.Action);
  const sends = actions.some((a) => a === 'sqs:SendMessage' || a === 'sqs:*' || a === '*');
  const condition = statement.Condition as Record<string, Record<string, unknown>> | undefined;
  const namesSenders = ['ArnNotEquals', 'ArnNotLike'].some(
    (operator) => condition?.[operator]?.['aws:PrincipalArn'] !== undefined,
  );
  return everyone && sends && namesSenders;
}
