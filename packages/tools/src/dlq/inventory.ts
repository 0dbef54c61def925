import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { causeOf } from './causes';
import { judgeHorizon } from './horizon';
import { eventIdOf, peek, tenantOf, type ReadOptions } from './messages';

export interface QueueInventory {
  messages: number;
  inFlight: number;
  /** From the oldest message read; undefined when the queue is empty. */
  oldestAgeSeconds?: number;
  byCause: Record<string, number>;
  /** Consumer DLQs with a dedupe horizon only: how many of the messages read are past it. */
  pastHorizon?: number;
  /** How many messages the counts above were read from (at most the sample size). */
  sampled: number;
  /**
   * How many events those messages are: copies of one event (its tenant and eventId) count once, a
   * message with no event (poison) counts as its own. A poison message delivered in several crashed
   * batches, or an event dead-lettered by several copies, shows as fewer events than messages.
   */
  events: number;
}

/** What makes two DLQ messages copies of one event: its tenant and eventId; a message without one is its own. */
export function eventKeyOf(message: { messageId: string; body: string }): string {
  const eventId = eventIdOf(message.body);
  return eventId === undefined ? `message ${message.messageId}` : `event ${tenantOf(message.body) ?? ''} ${eventId}`;
}

/** A DLQ's counts (SQS's approximate ones) and what a sample of its messages says: causes, age, horizon, events. */
export async function inventory(
  sqs: SQSClient,
  url: string,
  sample: number,
  options: ReadOptions & { now?: Date; dedupeHorizonSeconds?: number },
): Promise<QueueInventory> {
  const { Attributes = {} } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  const messages = await peek(sqs, url, sample, options);
  const byCause: Record<string, number> = {};
  for (const message of messages) byCause[causeOf(message)] = (byCause[causeOf(message)] ?? 0) + 1;
  const oldest = messages
    .map((m) => m.sentAt)
    .filter((t): t is string => t !== undefined)
    .sort()[0];
  const now = options.now ?? new Date();
  const horizon = options.dedupeHorizonSeconds;
  return {
    messages: Number(Attributes.ApproximateNumberOfMessages ?? 0),
    inFlight: Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0),
    oldestAgeSeconds:
      oldest === undefined ? undefined : Math.max(0, Math.round((now.getTime() - Date.parse(oldest)) / 1000)),
    byCause,
    ...(horizon === undefined
      ? {}
      : { pastHorizon: messages.filter((m) => judgeHorizon(m.body, horizon, now).horizon === 'past').length }),
    sampled: messages.length,
    events: new Set(messages.map(eventKeyOf)).size,
  };
}
