import { GetQueueAttributesCommand, SendMessageCommand, SetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { proofDomainOf } from '../domain-parts';
import type { ConsumerSpec } from '@exactly-once/runtime/consumer-spec';
import { redrive } from '../dlq/messages';
import { POISON_CAUSE, poisonBody as sentPoisonBody } from '../dlq/causes';
import { discoverDeadLetterQueues } from '../dlq/queues';
import { ENTITY_OUTBOX } from '@exactly-once/runtime/aws/outbox-table';
import { consumerQueueUrls, requiredOutput } from '../stack';
import type { Target } from './target';
import type { ProducedEvent } from './verify';
import type { ProofDomain } from './domain';
import type { PlannedRequest } from './plan';

/**
 * The faults the kit injects itself, from outside the functions (faults.ts names them all): poison to
 * the queues, copies of delivered events seeded in the DLQs, events under a reused or forged id, the
 * operator's redrive, and the local queues' shortened visibility.
 */

export function poisonBody(runId: string, n: number): string {
  return sentPoisonBody({
    runId,
    n,
    note: `not an event of the domain: must end in the DLQ with failureCause ${POISON_CAUSE}`,
  });
}

/**
 * Sends `perQueue` poison messages to every consumer's source queue (every
 * consumer of the list). Returns how many were sent.
 */
export async function sendPoison(
  target: Target,
  runId: string,
  perQueue: number,
  consumers: readonly ConsumerSpec[] = target.domain.consumers,
): Promise<number> {
  const queues = consumerQueueUrls(target.outputs, consumers);
  let sent = 0;
  for (let n = 0; n < perQueue; n++) {
    for (const { consumer, queueUrl } of queues) {
      const id = `poison-${runId}-${n}`;
      await sendMessage(target, consumer, queueUrl, poisonBody(runId, n), { groupId: id, deduplicationId: id });
      sent += 1;
    }
  }
  return sent;
}

/** One message; on a FIFO queue with its group and deduplication id (SQS refuses a FIFO message without a group). */
async function sendMessage(
  target: Target,
  consumer: ConsumerSpec,
  queueUrl: string,
  body: string,
  fifo: { groupId: string; deduplicationId: string },
): Promise<void> {
  await target.sqs.send(
    new SendMessageCommand({
      QueueUrl: queueUrl,
      MessageBody: body,
      ...(consumer.fifo ? { MessageGroupId: fifo.groupId, MessageDeduplicationId: fifo.deduplicationId } : {}),
    }),
  );
}

/**
 * Makes the redrive step meaningful: copies of events this run already
 * delivered are put in the DLQs, as if their effects had committed and every
 * ack had then been lost until maxReceiveCount. Redriving them must not apply
 * anything twice. Returns how many were seeded.
 */
export async function seedDeadLetters(
  target: Target,
  runId: string,
  count: number,
  consumers: readonly ConsumerSpec[] = target.domain.consumers,
): Promise<number> {
  const events = (await runEvents(target, runId)).slice(0, count);
  for (const event of events) {
    const { eventId, entityId } = outboxEventKeys(event);
    // Into the DLQ of every consumer that takes the event, as the relay would have routed it.
    await sendToItsConsumers(target, consumers, 'deadLetterQueueUrl', event, {
      groupId: entityId,
      deduplicationId: `dlq-seed-${eventId}`,
    });
  }
  return events.length;
}

/** `event` to the queue (or DLQ) of every consumer that takes its type; how many were sent. */
async function sendToItsConsumers(
  target: Target,
  consumers: readonly ConsumerSpec[],
  which: 'queueUrl' | 'deadLetterQueueUrl',
  event: Record<string, unknown>,
  fifo: { groupId: string; deduplicationId: string },
): Promise<number> {
  const { type } = outboxEventKeys(event);
  const takers = consumerQueueUrls(target.outputs, consumers).filter((q) => q.consumer.eventTypes.includes(type));
  for (const queue of takers) await sendMessage(target, queue.consumer, queue[which], JSON.stringify(event), fifo);
  return takers.length;
}

/**
 * The `reused-id` fault: for `count` of this run's events already relayed, a copy with the same
 * eventId and other content (another entity id) to every consumer queue that
 * takes it, as a producer reusing an id, or a forger who got past the queue policy, would send it.
 * Sent after the load drained, so each consumer has applied the real event first: the copy must be
 * dead-lettered as EventIdReused, never acknowledged as a duplicate. Returns the copies sent.
 */
export async function sendReusedIds(
  target: Target,
  runId: string,
  count: number,
  consumers: readonly ConsumerSpec[] = target.domain.consumers,
): Promise<number> {
  const events = (await runEvents(target, runId)).slice(0, count);
  let sent = 0;
  for (const event of events) {
    const { eventId, entityId } = outboxEventKeys(event);
    // Another entity under the same id: a field every consumer reads (a payload field its schema does
    // not know would be dropped by its parse, and the copy would rightly be the same event).
    const reused = { ...event, entityId: `${entityId}-reused` };
    sent += await sendToItsConsumers(target, consumers, 'queueUrl', reused, {
      groupId: `${entityId}-reused`,
      deduplicationId: `${eventId}.reused`,
    });
  }
  return sent;
}

/**
 * The creates of the plan whose events the `forged-first` fault forges: the last `count` that build a
 * forged event. Not the first: they meet a cold runtime (functions starting, DynamoDB Local's JVM
 * warming up), and one that is never answered 201 produces no real event for its forged copy to stand
 * in for, so the run would show no replaced claim (seen on the probe app: 18 of 20 creates accepted,
 * the forged one among the two that were not, and no finding at all).
 *
 * @example
 * ```ts
 * const targets = forgedCreates(plan, 2, domain); // the plan's last two creates
 * ```
 */
export function forgedCreates(
  plan: readonly PlannedRequest[],
  count: number,
  domain: Pick<ProofDomain, 'forgedCreateEvent'>,
): PlannedRequest[] {
  const forge = domain.forgedCreateEvent;
  if (forge === undefined) return [];
  const chosen: PlannedRequest[] = [];
  // Distinct keys: a retry of a create produces the same event, which needs one forged copy.
  const keys = new Set<string>();
  for (let i = plan.length - 1; i >= 0 && chosen.length < count; i--) {
    const request = plan[i];
    const key = `${request.caller}\n${request.idempotencyKey}`;
    if (keys.has(key) || forge(request, new Date(0).toISOString()) === undefined) continue;
    keys.add(key);
    chosen.unshift(request);
  }
  return chosen;
}

/**
 * The `forged-first` fault, before the load: for `count` creates of the plan (forgedCreates: the last
 * ones), the event each will produce (its id derives from the caller and the key) with other content
 * goes to every consumer queue that takes it, under a deduplication id of its own, as a forger who got
 * past the queues' sender policy would send it. The forged copy is applied in the real one's place
 * (only the policy prevents that); the real one must end in a DLQ as EventIdReused. Returns the copies sent.
 */
export async function sendForgedFirst(
  target: Target,
  plan: readonly PlannedRequest[],
  count: number,
  domain: ProofDomain = proofDomainOf(target.domain),
  consumers: readonly ConsumerSpec[] = target.domain.consumers,
): Promise<number> {
  const forge = domain.forgedCreateEvent;
  if (forge === undefined)
    throw new Error(`forged-first: the ${domain.entityNounSingular} domain builds no forged event (forgedCreateEvent)`);
  let sent = 0;
  for (const request of forgedCreates(plan, count, domain)) {
    const forged = forge(request, new Date().toISOString())!;
    sent += await sendToItsConsumers(
      target,
      consumers,
      'queueUrl',
      { ...forged },
      {
        groupId: forged.entityId,
        deduplicationId: `${forged.eventId}.forged`,
      },
    );
  }
  return sent;
}

/** This run's events, from the outbox items: the plan puts the run id in every request body. */
async function runEvents(target: Target, runId: string): Promise<Record<string, unknown>[]> {
  const { Items = [] } = await target.dynamodb.send(
    new ScanCommand({
      TableName: requiredOutput(target.outputs, target.domain.outboxTableOutput),
      FilterExpression: 'entity = :outbox',
      ExpressionAttributeValues: { ':outbox': { S: ENTITY_OUTBOX } },
    }),
  );
  return Items.map((item) => unmarshall(item).event as Record<string, unknown>).filter((event) =>
    JSON.stringify(event).includes(`"${runId}-`),
  );
}

/**
 * The id, type and entity of an outbox item's event: the envelope's fields,
 * or, on an event written before the envelope, `eventType` and `orderId`.
 */
export function outboxEventKeys(event: Record<string, unknown>): ProducedEvent {
  return {
    eventId: String(event.eventId),
    type: String(event.type ?? event.eventType),
    entityId: String(event.entityId ?? event.orderId),
  };
}

/**
 * The operator's recovery, with the DLQ tool's own redrive (npm run dlq):
 * every consumer DLQ of the stack, this run's messages only (on a shared stack
 * the others are someone else's to judge), poison left where it belongs. A
 * message SQS moved after maxReceiveCount carries no cause, so poison is also
 * recognised by its body. Returns how many moved.
 */
export async function redriveDeadLetters(
  target: Target,
  isPoison: (body: string) => boolean,
  isThisRuns: (body: string) => boolean = () => true,
): Promise<number> {
  let moved = 0;
  for (const queue of discoverDeadLetterQueues(target.outputs, target.domain.consumers).filter(
    (q) => q.kind === 'consumer',
  )) {
    const result = await redrive(target.sqs, queue, {
      max: 0,
      all: true,
      isEvent: target.domain.isEvent,
      select: (message) => !isPoison(message.body) && isThisRuns(message.body),
      waitSeconds: 1,
    });
    moved += result.moved.length;
  }
  return moved;
}

/**
 * Local fault runs shorten every consumer's source queue's visibility timeout, breaking the
 * synth-time rule on purpose and restoring it afterwards: a batch lost to an
 * injected crash comes back in seconds, not minutes, and the slow-handler fault
 * can outlive its visibility as it is meant to (a conforming deployment makes
 * that impossible: visibility >= 6 x the function timeout). On AWS the slow fault
 * only bites with --slow-seconds above the consumer timeout (30 s): the handler
 * then runs into its own timeout and the batch is redelivered. Returns the restore function.
 */
export async function setLocalVisibility(
  target: Target,
  seconds: number,
  consumers: readonly ConsumerSpec[] = target.domain.consumers,
): Promise<() => Promise<void>> {
  const urls = consumerQueueUrls(target.outputs, consumers).map((q) => q.queueUrl);
  const original = await Promise.all(
    urls.map(async (url) => {
      const { Attributes = {} } = await target.sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['VisibilityTimeout'] }),
      );
      return Attributes.VisibilityTimeout ?? '30';
    }),
  );
  await Promise.all(
    urls.map((url) =>
      target.sqs.send(
        new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { VisibilityTimeout: String(seconds) } }),
      ),
    ),
  );
  return async () => {
    await Promise.all(
      urls.map((url, i) =>
        target.sqs.send(
          new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { VisibilityTimeout: original[i] } }),
        ),
      ),
    );
  };
}
