import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  StartMessageMoveTaskCommand,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { randomUUID } from 'node:crypto';
import { parseOrderEvent } from '../../lambdas/domain/events';
import type { DeadLetterQueue } from './queues';

/** A message in a DLQ, with what the consumer wrote about its failure. */
export interface DeadLetter {
  messageId: string;
  receiptHandle: string;
  body: string;
  sentAt?: string;
  groupId?: string;
  /** The consumer's failure attributes (failureCause, consumer, attempt, originalMessageId, ...). */
  attributes: Record<string, string>;
}

/** Poison: a body that is not an order event. It fails the same way however often it is redriven. */
export const POISON_CAUSE = 'SchemaViolation';
/** SQS moved it after maxReceiveCount: the consumer never got to write a cause. */
export const RETRIES_EXHAUSTED = 'RetriesExhausted';

// Long enough for one receive-send-delete round; whatever is not moved is made visible again at once.
const HOLD_SECONDS = 60;

export function causeOf(message: DeadLetter): string {
  return message.attributes.failureCause ?? RETRIES_EXHAUSTED;
}

/** Poison by its cause, or (moved by SQS with no cause) by a body that is not an order event. */
export function isPoison(message: DeadLetter): boolean {
  if (message.attributes.failureCause !== undefined) return message.attributes.failureCause === POISON_CAUSE;
  try {
    parseOrderEvent(message.body);
    return false;
  } catch {
    return true;
  }
}

export function eventIdOf(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { eventId?: unknown };
    return typeof parsed.eventId === 'string' ? parsed.eventId : undefined;
  } catch {
    return undefined;
  }
}

function toDeadLetter(message: Message): DeadLetter {
  const attributes: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.MessageAttributes ?? {}))
    if (value.StringValue !== undefined) attributes[name] = value.StringValue;
  const sent = message.Attributes?.SentTimestamp;
  return {
    messageId: message.MessageId!,
    receiptHandle: message.ReceiptHandle!,
    body: message.Body ?? '',
    sentAt: sent === undefined ? undefined : new Date(Number(sent)).toISOString(),
    groupId: message.Attributes?.MessageGroupId,
    attributes,
  };
}

/** Receives up to `max` messages and holds them (invisible) for the caller to delete or release. */
export async function receive(sqs: SQSClient, url: string, max: number, waitSeconds: number): Promise<DeadLetter[]> {
  const { Messages = [] } = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: url,
      MaxNumberOfMessages: Math.max(1, Math.min(10, max)),
      WaitTimeSeconds: waitSeconds,
      VisibilityTimeout: HOLD_SECONDS,
      MessageSystemAttributeNames: ['All'],
      MessageAttributeNames: ['All'],
    }),
  );
  return Messages.map(toDeadLetter);
}

/** Makes held messages visible again (DLQs have no redrive policy: the extra receive costs nothing). */
export async function release(sqs: SQSClient, url: string, messages: DeadLetter[]): Promise<void> {
  for (let i = 0; i < messages.length; i += 10) {
    const chunk = messages.slice(i, i + 10);
    await sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: url,
        Entries: chunk.map((m, n) => ({ Id: String(n), ReceiptHandle: m.receiptHandle, VisibilityTimeout: 0 })),
      }),
    );
  }
}

export interface ReadOptions {
  /** Seconds a receive may wait: 1 on AWS (short polls sample only some servers), 0 locally. */
  waitSeconds: number;
}

/**
 * Up to `max` messages, without consuming any: each is received, read and made
 * visible again straight away. A FIFO queue shows each group's head first (SQS
 * hands out the next message of a group only when the one before is gone).
 */
export async function peek(sqs: SQSClient, url: string, max: number, options: ReadOptions): Promise<DeadLetter[]> {
  const seen: DeadLetter[] = [];
  try {
    while (seen.length < max) {
      const batch = await receive(sqs, url, max - seen.length, options.waitSeconds);
      if (batch.length === 0) break;
      seen.push(...batch);
    }
  } finally {
    await release(sqs, url, seen);
  }
  return seen;
}

export interface QueueInventory {
  messages: number;
  inFlight: number;
  /** From the oldest message read; undefined when the queue is empty. */
  oldestAgeSeconds?: number;
  byCause: Record<string, number>;
  /** How many messages the counts above were read from (at most the sample size). */
  sampled: number;
}

export async function inventory(
  sqs: SQSClient,
  url: string,
  sample: number,
  options: ReadOptions & { now?: Date },
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
  const now = (options.now ?? new Date()).getTime();
  return {
    messages: Number(Attributes.ApproximateNumberOfMessages ?? 0),
    inFlight: Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0),
    oldestAgeSeconds: oldest === undefined ? undefined : Math.max(0, Math.round((now - Date.parse(oldest)) / 1000)),
    byCause,
    sampled: messages.length,
  };
}

export interface RedriveOptions {
  /** At most this many messages move (the whole queue when `all`). */
  max: number;
  all?: boolean;
  /** Only messages with this failureCause. */
  cause?: string;
  includePoison?: boolean;
  dryRun?: boolean;
  /** An extra filter (the proof kit moves only its own run's messages). */
  select?: (message: DeadLetter) => boolean;
  /** Where the tool runs: a whole-queue, unfiltered move on AWS is one StartMessageMoveTask. */
  onAws?: boolean;
  waitSeconds: number;
  onProgress?: (progress: { moved: number; skipped: number; failed: number }) => void;
}

export interface RedriveResult {
  method: 'receive-send-delete' | 'message-move-task' | 'discard';
  moved: { messageId: string; eventId?: string; groupId?: string; cause: string }[];
  skipped: { messageId: string; reason: string }[];
  failed: { messageId: string; error: string }[];
  /** StartMessageMoveTask only: the task to follow with ListMessageMoveTasks. */
  taskHandle?: string;
  approximateMessages?: number;
}

function skipReason(message: DeadLetter, options: RedriveOptions): string | undefined {
  if (options.cause !== undefined && causeOf(message) !== options.cause) return `cause ${causeOf(message)}`;
  if (!options.includePoison && isPoison(message)) return 'poison (use --include-poison to move it anyway)';
  if (options.select !== undefined && !options.select(message)) return 'not selected';
  return undefined;
}

/**
 * Moves messages back to the source queue, small batches first: receive, send
 * a copy to the source, delete from the DLQ. A FIFO copy keeps its group id
 * (order within the group holds: the next message of a group is only handed
 * out once the one before is deleted) and gets a fresh deduplication id (the
 * source saw the original's id, maybe less than 5 minutes ago). What is not
 * moved is made visible again at once. A failed send leaves the message where
 * it is; a failed delete after a send can only duplicate a delivery, which the
 * consumers' eventId inbox absorbs.
 */
export async function redrive(sqs: SQSClient, queue: DeadLetterQueue, options: RedriveOptions): Promise<RedriveResult> {
  if (queue.kind !== 'consumer' || queue.sourceUrl === undefined)
    throw new Error(`${queue.name} has no source queue to redrive to`);
  const wholeQueue = options.all && options.cause === undefined && options.select === undefined;
  if (options.onAws && wholeQueue && options.includePoison && !options.dryRun)
    return startMessageMoveTask(sqs, queue.url, queue.sourceUrl);

  const result: RedriveResult = { method: 'receive-send-delete', moved: [], skipped: [], failed: [] };
  const held: DeadLetter[] = [];
  const seen = new Set<string>();
  const limit = options.all ? Number.POSITIVE_INFINITY : options.max;
  try {
    while (result.moved.length < limit) {
      const batch = await receive(sqs, queue.url, Math.min(10, limit - result.moved.length), options.waitSeconds);
      // Empty, or a held message is visible again (a long pass outlived its hold): every message was seen.
      if (batch.length === 0 || batch.some((m) => seen.has(m.messageId))) {
        held.push(...batch.filter((m) => seen.has(m.messageId)));
        await release(
          sqs,
          queue.url,
          batch.filter((m) => !seen.has(m.messageId)),
        );
        break;
      }
      for (const message of batch) seen.add(message.messageId);
      for (const message of batch) {
        const reason = skipReason(message, options);
        const entry = {
          messageId: message.messageId,
          eventId: eventIdOf(message.body),
          groupId: message.groupId,
          cause: causeOf(message),
        };
        if (reason !== undefined || options.dryRun || result.moved.length >= limit) {
          held.push(message);
          if (reason !== undefined) result.skipped.push({ messageId: message.messageId, reason });
          else if (options.dryRun && result.moved.length < limit) result.moved.push(entry);
          continue;
        }
        try {
          await sqs.send(
            new SendMessageCommand({
              QueueUrl: queue.sourceUrl,
              MessageBody: message.body,
              MessageAttributes: { redrivenFrom: { DataType: 'String', StringValue: queue.name } },
              ...(queue.fifo
                ? {
                    MessageGroupId: message.groupId ?? message.messageId,
                    MessageDeduplicationId: `redrive-${randomUUID()}`,
                  }
                : {}),
            }),
          );
        } catch (error) {
          held.push(message);
          result.failed.push({ messageId: message.messageId, error: (error as Error).message });
          continue;
        }
        try {
          await sqs.send(new DeleteMessageCommand({ QueueUrl: queue.url, ReceiptHandle: message.receiptHandle }));
        } catch (error) {
          result.failed.push({
            messageId: message.messageId,
            error: `sent, but not deleted from the DLQ: ${(error as Error).message}`,
          });
        }
        result.moved.push(entry);
      }
      options.onProgress?.({
        moved: result.moved.length,
        skipped: result.skipped.length,
        failed: result.failed.length,
      });
    }
  } finally {
    await release(sqs, queue.url, held);
  }
  return result;
}

async function queueArn(sqs: SQSClient, url: string): Promise<string> {
  const { Attributes = {} } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }),
  );
  return Attributes.QueueArn!;
}

/**
 * SQS moves the whole queue itself. The destination is explicit: messages a
 * consumer copied into the DLQ (permanent errors) have no "original source" for SQS.
 */
async function startMessageMoveTask(sqs: SQSClient, dlqUrl: string, sourceUrl: string): Promise<RedriveResult> {
  const [sourceArn, destinationArn] = await Promise.all([queueArn(sqs, dlqUrl), queueArn(sqs, sourceUrl)]);
  const { Attributes = {} } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
  );
  const { TaskHandle } = await sqs.send(
    new StartMessageMoveTaskCommand({ SourceArn: sourceArn, DestinationArn: destinationArn }),
  );
  return {
    method: 'message-move-task',
    moved: [],
    skipped: [],
    failed: [],
    taskHandle: TaskHandle,
    approximateMessages: Number(Attributes.ApproximateNumberOfMessages ?? 0),
  };
}

/**
 * An async-invocation DLQ holds failed scheduled runs. They carry no work of
 * their own (the sweeper looks for what is pending each time), so there is
 * nothing to resend: the next scheduled run redoes it. Redrive removes them.
 */
export async function discardFailedRuns(
  sqs: SQSClient,
  queue: DeadLetterQueue,
  options: Pick<RedriveOptions, 'max' | 'all' | 'dryRun' | 'waitSeconds'>,
): Promise<RedriveResult> {
  const result: RedriveResult = { method: 'discard', moved: [], skipped: [], failed: [] };
  const held: DeadLetter[] = [];
  const limit = options.all ? Number.POSITIVE_INFINITY : options.max;
  try {
    while (result.moved.length < limit) {
      const batch = await receive(sqs, queue.url, Math.min(10, limit - result.moved.length), options.waitSeconds);
      if (batch.length === 0) break;
      for (const message of batch) {
        result.moved.push({ messageId: message.messageId, cause: causeOf(message) });
        if (options.dryRun) held.push(message);
        else await sqs.send(new DeleteMessageCommand({ QueueUrl: queue.url, ReceiptHandle: message.receiptHandle }));
      }
    }
  } finally {
    await release(sqs, queue.url, held);
  }
  return result;
}
