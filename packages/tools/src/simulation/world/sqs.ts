import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { simQueueUrl } from './consumers';
import type { Scheduler } from './scheduler';

/**
 * Simulated SQS in virtual time, standard and FIFO, with the semantics the
 * pipeline depends on:
 * - standard: any visible message may come in any order; a delivery may be
 *   repeated (the copy stays visible: at-least-once);
 * - FIFO: per group in send order, a group is locked while one of its
 *   messages is in flight; a send with a deduplication id seen in the last
 *   5 minutes (in the queue, or in its group when the deduplication scope
 *   is messageGroup, as the stack's source queue has it) is accepted and dropped;
 * - both: visibility timeout per message (ChangeMessageVisibility on the
 *   latest receipt handle only), ApproximateReceiveCount, redrive to the DLQ
 *   when a receive would exceed maxReceiveCount, retention per queue (an
 *   expired message is gone, from a DLQ too, which the invariants then notice).
 *   Retention counts from the message's enqueue time: a send (the consumer's
 *   own DLQ copy, an operator's redrive: new messages) starts it afresh; SQS's
 *   own move to the DLQ keeps it on a standard queue and restarts it on FIFO.
 */
export interface SimMessage {
  messageId: string;
  body: string;
  groupId?: string;
  dedupId?: string;
  sentAt: number;
  /** Where its retention counts from: the send, or for a standard queue's move to its DLQ, the original send. */
  enqueuedAt: number;
  firstReceivedAt?: number;
  receiveCount: number;
  visibleAt: number;
  handle?: string;
  attributes: Record<string, string>;
}

export interface QueueOptions {
  name: string;
  fifo: boolean;
  visibilityTimeoutSeconds: number;
  maxReceiveCount?: number;
  retentionSeconds: number;
  deadLetterQueue?: SimQueue;
  /** FIFO: where a deduplication id must be unique: the whole queue (SQS's default) or each message group. */
  deduplicationScope?: 'queue' | 'messageGroup';
  /** Standard queues: chance that a received message stays visible too (delivered again). */
  duplicateChance?: number;
}

const FIFO_DEDUP_WINDOW_MS = 5 * 60 * 1000;

export class SimQueue {
  readonly messages = new Map<string, SimMessage>();
  private readonly dedup = new Map<string, number>();
  private nextId = 0;
  private nextHandle = 0;
  expired: SimMessage[] = [];
  private waiters: (() => void)[] = [];
  /** FIFO: the last receive in which each group was found blocked (cheaper than a new set per receive). */
  private readonly groupBlockedIn = new Map<string, number>();
  private receipts = 0;
  /** A message older than one before it was added (a standard queue's move to this DLQ): expire scans them all. */
  private unordered = false;
  private newestEnqueuedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly scheduler: Scheduler,
    readonly options: QueueOptions,
  ) {}

  get url(): string {
    return simQueueUrl(this.options.name);
  }

  send(
    body: string,
    options: { groupId?: string; dedupId?: string; attributes?: Record<string, string> } = {},
  ): string {
    const now = this.scheduler.now;
    if (this.options.fifo) {
      if (options.groupId === undefined || options.dedupId === undefined)
        throw new Error(`${this.options.name}: a FIFO send needs a group id and a deduplication id`);
      // SQS ids never hold a newline, so the pair cannot collide with another.
      const dedupKey =
        this.options.deduplicationScope === 'messageGroup' ? `${options.groupId}\n${options.dedupId}` : options.dedupId;
      const seenAt = this.dedup.get(dedupKey);
      if (seenAt !== undefined && now - seenAt < FIFO_DEDUP_WINDOW_MS) {
        this.scheduler.trace(`${this.options.name} dropped duplicate send ${options.dedupId}`);
        return `dedup-${options.dedupId}`;
      }
      this.dedup.set(dedupKey, now);
    }
    const messageId = `${this.options.name}-m${++this.nextId}`;
    this.newestEnqueuedAt = now;
    this.messages.set(messageId, {
      messageId,
      body,
      groupId: options.groupId,
      dedupId: options.dedupId,
      sentAt: now,
      enqueuedAt: now,
      receiveCount: 0,
      visibleAt: now,
      attributes: options.attributes ?? {},
    });
    this.wakeAt(now);
    return messageId;
  }

  /**
   * Long polling: `callback` runs once, when a message may have become
   * receivable (a send, a visibility change, a deletion that unlocks a FIFO group).
   */
  waitForMessages(callback: () => void): void {
    this.waiters.push(callback);
  }

  private wakeAt(at: number): void {
    this.scheduler.at(at - this.scheduler.now, () => {
      if (this.waiters.length === 0) return;
      const waiters = this.waiters;
      this.waiters = [];
      for (const waiter of waiters) waiter();
    });
  }

  /** One ReceiveMessage of up to `max` messages; each returned message is a snapshot taken at receipt. */
  receive(max: number): SimMessage[] {
    const now = this.scheduler.now;
    this.expire(now);
    const received: SimMessage[] = [];
    if (this.options.fifo) {
      // A group is blocked for this receive once one of its messages is found in flight.
      const receipt = ++this.receipts;
      const blockedIn = this.groupBlockedIn;
      for (const message of this.messages.values()) {
        if (received.length >= max) break;
        const group = message.groupId!;
        if (blockedIn.get(group) === receipt) continue;
        if (message.visibleAt > now) {
          blockedIn.set(group, receipt); // in flight: the group waits for it
          continue;
        }
        if (this.moveIfExhausted(message)) continue;
        received.push(this.deliver(message, now));
      }
      return received;
    }
    const visible: SimMessage[] = [];
    for (const message of this.messages.values()) if (message.visibleAt <= now) visible.push(message);
    // Any visible message, in any order: draw without replacement.
    while (received.length < max && visible.length > 0) {
      const at = Math.floor(this.scheduler.random() * visible.length);
      const message = visible[at];
      visible[at] = visible[visible.length - 1];
      visible.pop();
      if (this.moveIfExhausted(message)) continue;
      received.push(this.deliver(message, now));
      if (this.scheduler.chance(this.options.duplicateChance ?? 0)) {
        message.visibleAt = now; // a second copy can be received while this one is in flight
        this.scheduler.fault('sqs-duplicate-delivery', `${this.options.name} ${message.messageId}`);
      }
    }
    return received;
  }

  delete(handle: string): boolean {
    const message = this.byHandle(handle);
    if (message === undefined) return false; // an old receipt handle: the message was received again since
    this.messages.delete(message.messageId);
    if (this.options.fifo) this.wakeAt(this.scheduler.now);
    return true;
  }

  changeVisibility(handle: string, seconds: number): void {
    const message = this.byHandle(handle);
    if (message === undefined) throw new Error(`ReceiptHandleIsInvalid: ${handle}`);
    if (message.visibleAt <= this.scheduler.now) throw new Error(`MessageNotInflight: ${message.messageId}`);
    message.visibleAt = this.scheduler.now + seconds * 1000;
    this.wakeAt(message.visibleAt);
  }

  private byHandle(handle: string): SimMessage | undefined {
    const message = this.messages.get(handle.slice(0, handle.lastIndexOf('#')));
    return message?.handle === handle ? message : undefined;
  }

  /** Every message still held, in flight or not (expiring the old ones first). */
  all(): SimMessage[] {
    this.expire(this.scheduler.now);
    return [...this.messages.values()];
  }

  /**
   * Operator redrive: moves every message (those past retention are gone
   * first) back to `target` as a new message: new id, new dedup id, fresh
   * retention, receive count 0.
   */
  redriveTo(target: SimQueue): number {
    this.expire(this.scheduler.now);
    let moved = 0;
    for (const message of [...this.messages.values()]) {
      this.messages.delete(message.messageId);
      target.send(message.body, {
        groupId: message.groupId,
        dedupId: message.dedupId === undefined ? undefined : `${message.dedupId}.redrive-${this.scheduler.now}`,
        attributes: message.attributes,
      });
      moved += 1;
    }
    return moved;
  }

  private deliver(message: SimMessage, now: number): SimMessage {
    message.receiveCount += 1;
    message.firstReceivedAt ??= now;
    message.visibleAt = now + this.options.visibilityTimeoutSeconds * 1000;
    message.handle = `${message.messageId}#${++this.nextHandle}`;
    this.wakeAt(message.visibleAt);
    return { ...message };
  }

  private moveIfExhausted(message: SimMessage): boolean {
    const max = this.options.maxReceiveCount;
    const dlq = this.options.deadLetterQueue;
    if (max === undefined || dlq === undefined || message.receiveCount < max) return false;
    this.messages.delete(message.messageId);
    // A standard queue's message keeps its enqueue time in the DLQ (its retention runs on); FIFO's restarts.
    const enqueuedAt = this.options.fifo ? this.scheduler.now : message.enqueuedAt;
    dlq.accept({
      ...message,
      sentAt: this.scheduler.now,
      enqueuedAt,
      handle: undefined,
      visibleAt: this.scheduler.now,
    });
    this.scheduler.trace(
      `${this.options.name} moved ${message.messageId} to ${dlq.options.name} after ${max} receives`,
    );
    return true;
  }

  /** A message SQS moves here from its source queue after maxReceiveCount. */
  private accept(message: SimMessage): void {
    if (message.enqueuedAt < this.newestEnqueuedAt) this.unordered = true;
    this.newestEnqueuedAt = Math.max(this.newestEnqueuedAt, message.enqueuedAt);
    this.messages.set(message.messageId, message);
  }

  private expire(now: number): void {
    const limit = now - this.options.retentionSeconds * 1000;
    for (const message of this.messages.values()) {
      // Messages are added at the end, stamped with the current time (unless a move kept an older
      // stamp: then every message is looked at): the rest are younger.
      if (message.enqueuedAt >= limit) {
        if (this.unordered) continue;
        break;
      }
      this.messages.delete(message.messageId);
      this.expired.push(message);
      this.scheduler.trace(`${this.options.name} expired ${message.messageId} (retention)`);
    }
  }
}

/**
 * The subset of the SQS client the real adapters call (SqsEventPublisher,
 * SqsMessageControl), on simulated queues; the invocation's `io` decides when
 * each call completes and whether it crashes, and its `sqsSendFailure` whether
 * a send fails as a whole.
 */
export interface SqsCaller {
  io<T>(label: string, operation: () => T): Promise<T>;
  sqsSendFailure(queue: SimQueue): Error | undefined;
}

export function simulatedSqsClient(queues: ReadonlyMap<string, SimQueue>, caller: SqsCaller): SQSClient {
  return new SimulatedSqsClient(queues, caller) as unknown as SQSClient;
}

/** A class, not an object literal of closures, so an invocation creates no functions for it. */
class SimulatedSqsClient {
  constructor(
    private readonly queues: ReadonlyMap<string, SimQueue>,
    private readonly caller: SqsCaller,
  ) {}

  send(command: unknown): Promise<unknown> {
    const { caller } = this;
    if (command instanceof SendMessageBatchCommand) {
      const queue = this.queueOf(command.input.QueueUrl);
      return caller.io(`SendMessageBatch ${queue.options.name} x${command.input.Entries?.length}`, () => {
        const error = caller.sqsSendFailure(queue);
        if (error !== undefined) throw error;
        const Successful = (command.input.Entries ?? []).map((entry) => ({
          Id: entry.Id,
          MessageId: queue.send(entry.MessageBody ?? '', {
            groupId: entry.MessageGroupId,
            dedupId: entry.MessageDeduplicationId,
            attributes: attributesOf(entry.MessageAttributes),
          }),
        }));
        return { Successful, Failed: [] };
      });
    }
    if (command instanceof SendMessageCommand) {
      const queue = this.queueOf(command.input.QueueUrl);
      return caller.io(`SendMessage ${queue.options.name}`, () => {
        const error = caller.sqsSendFailure(queue);
        if (error !== undefined) throw error;
        return {
          MessageId: queue.send(command.input.MessageBody ?? '', {
            groupId: command.input.MessageGroupId,
            dedupId: command.input.MessageDeduplicationId,
            attributes: attributesOf(command.input.MessageAttributes),
          }),
        };
      });
    }
    if (command instanceof ChangeMessageVisibilityCommand) {
      const queue = this.queueOf(command.input.QueueUrl);
      return caller.io(
        `ChangeMessageVisibility ${command.input.ReceiptHandle} ${command.input.VisibilityTimeout}s`,
        () => {
          queue.changeVisibility(command.input.ReceiptHandle ?? '', command.input.VisibilityTimeout ?? 0);
          return {};
        },
      );
    }
    if (command instanceof DeleteMessageCommand) {
      const queue = this.queueOf(command.input.QueueUrl);
      return caller.io(`DeleteMessage ${command.input.ReceiptHandle}`, () => ({
        deleted: queue.delete(command.input.ReceiptHandle ?? ''),
      }));
    }
    throw new Error(`simulated SQS: unsupported command ${(command as object).constructor.name}`);
  }

  private queueOf(url: string | undefined): SimQueue {
    const queue = this.queues.get(url ?? '');
    if (queue === undefined) throw new Error(`QueueDoesNotExist: ${url}`);
    return queue;
  }
}

function attributesOf(attributes: Record<string, { StringValue?: string }> | undefined): Record<string, string> {
  const values: Record<string, string> = {};
  for (const name in attributes) values[name] = attributes[name].StringValue ?? '';
  return values;
}
