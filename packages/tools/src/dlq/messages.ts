import { isAccessDenied } from '../cli/access-denied';
import type { DeadLetter } from './dead-letter';
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
import { MAX_FUTURE_SKEW_SECONDS } from '@exactly-once/runtime/consumer/dedupe-horizon';
import {
  causeOf,
  currentCauseName,
  EVENT_ID_REUSED_CAUSE,
  isPoison,
  OCCURRED_IN_FUTURE_CAUSE,
  PROVIDER_KEY_WINDOW_CAUSE,
} from './causes';
import { envelopeOccurredAt, judgeHorizon, ORIGINAL_OCCURRED_AT, withFreshOccurredAt } from './horizon';
import type { DeadLetterQueue } from './queues';
import { PROVIDER_KEY_WINDOW_REASON, type ProviderCallFinding } from './provider-window';
import { pastHorizonReason, reusedIdDecision, stillInFutureReason } from './redrive-reasons';

export type { DeadLetter };

// Long enough for one receive-send-delete round; whatever is not moved is made visible again at once.
const HOLD_SECONDS = 60;

/** The tenant an event's envelope carries (part of its inbox key), or undefined. */
export const tenantOf = (body: string): string | undefined => envelopeString(body, 'tenant');

export const eventIdOf = (body: string): string | undefined => envelopeString(body, 'eventId');

/** The entity an event's envelope names (where a sequenced ledger keeps its claim), or undefined. */
export const entityIdOf = (body: string): string | undefined => envelopeString(body, 'entityId');

/** A string field of a message body's envelope, or undefined (not JSON, no such field, not a string). */
function envelopeString(body: string, field: 'eventId' | 'tenant' | 'entityId'): string | undefined {
  try {
    const value = (JSON.parse(body) as Record<string, unknown>)[field];
    return typeof value === 'string' ? value : undefined;
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

export interface RedriveOptions {
  /** At most this many messages move (the whole queue when `all`). */
  max: number;
  all?: boolean;
  /** Only messages with this failureCause. */
  cause?: string;
  includePoison?: boolean;
  /** Whether a body is one of the domain's events (its `isEvent`): a message that is not is poison. */
  isEvent: (body: string) => boolean;
  dryRun?: boolean;
  /**
   * The events (by eventId) past the queue's dedupe horizon that a person has
   * checked were NOT applied: these are resent with a fresh occurredAt (the
   * original in the attribute originalOccurredAt). Every other message past the
   * horizon stays in the DLQ.
   */
  pastHorizon?: readonly string[];
  /**
   * Events dead-lettered with ProviderKeyWindowPassed that a person has checked at the provider:
   * by eventId, what they found (provider-window.ts). Each is written where the consumer's ledger keeps
   * the call (its inbox entry, or its entity item) through `recordFinding` before its message moves;
   * every other such message stays in the DLQ.
   */
  providerFindings?: Readonly<Record<string, ProviderCallFinding>>;
  recordFinding?: (
    event: { eventId: string; tenant?: string; entityId?: string },
    finding: ProviderCallFinding,
  ) => Promise<void>;
  /** An extra filter (the proof kit moves only its own run's messages). */
  select?: (message: DeadLetter) => boolean;
  /**
   * Where the tool runs: a whole-queue, unfiltered move on AWS is one
   * StartMessageMoveTask, unless the queue has a dedupe horizon (see redrive).
   */
  onAws?: boolean;
  waitSeconds: number;
  /** The clock messages are judged on and a rewritten occurredAt comes from. */
  now?: () => Date;
  onProgress?: (progress: { moved: number; skipped: number; failed: number }) => void;
}

export interface MovedMessage {
  messageId: string;
  eventId?: string;
  groupId?: string;
  cause: string;
  /** ProviderKeyWindowPassed and named: what the person found, written where its consumer's ledger keeps the call before the move. */
  providerFinding?: ProviderCallFinding;
  /** Past the horizon and named by --past-horizon: the occurredAt it was (or would be) sent with... */
  occurredAt?: string;
  /** ...and the one it had, kept in the attribute originalOccurredAt. */
  originalOccurredAt?: string;
}

export interface RedriveResult {
  method: 'receive-send-delete' | 'message-move-task' | 'discard';
  moved: MovedMessage[];
  skipped: { messageId: string; reason: string }[];
  failed: { messageId: string; error: string }[];
  /** Consumer DLQs with a dedupe horizon, moved message by message: what the horizon did. */
  horizon?: {
    dedupeHorizonSeconds: number;
    /** Past the horizon and not named by --past-horizon: left in the DLQ. */
    leftPastHorizon: number;
    /** Past the horizon, named, and resent (or, in a dry run, to be resent) with a fresh occurredAt. */
    rewritten: number;
    /** Event ids named by --past-horizon that this pass did not see past the horizon. */
    notSeen: string[];
  };
  /** StartMessageMoveTask only: the task to follow with ListMessageMoveTasks. */
  taskHandle?: string;
  approximateMessages?: number;
}

/**
 * What redrive does with one message: skip it (and why), move it as it is, or
 * (past the horizon and named by --past-horizon) rewrite its occurredAt and move it.
 */
export function redriveDecision(
  message: DeadLetter,
  options: Pick<RedriveOptions, 'cause' | 'includePoison' | 'isEvent' | 'select' | 'pastHorizon' | 'providerFindings'>,
  dedupeHorizonSeconds: number | undefined,
  now: Date,
): { skip: string } | { move: 'as-is' | 'rewrite'; providerFinding?: ProviderCallFinding } {
  if (options.cause !== undefined && causeOf(message) !== currentCauseName(options.cause))
    return { skip: `cause ${causeOf(message)}` };
  if (!options.includePoison && isPoison(message, options.isEvent))
    return { skip: 'poison (use --include-poison to move it anyway)' };
  if (options.select !== undefined && !options.select(message)) return { skip: 'not selected' };
  // Redriven as it is, it would only come back: the id is taken by another event's claim.
  if (causeOf(message) === EVENT_ID_REUSED_CAUSE) return reusedIdDecision(message, options.cause !== undefined);
  // Redriven while its stamp is still ahead, it would only come back; once within the margin it applies.
  if (causeOf(message) === OCCURRED_IN_FUTURE_CAUSE) {
    const occurredAt = envelopeOccurredAt(message.body);
    if (occurredAt !== undefined && Date.parse(occurredAt) - now.getTime() > MAX_FUTURE_SKEW_SECONDS * 1000)
      return { skip: stillInFutureReason(occurredAt) };
  }
  // Redriven as it is, it would only come back: the consumer cannot tell whether the call went through.
  if (causeOf(message) === PROVIDER_KEY_WINDOW_CAUSE) {
    const eventId = eventIdOf(message.body);
    const finding = eventId === undefined ? undefined : options.providerFindings?.[eventId];
    return finding === undefined ? { skip: PROVIDER_KEY_WINDOW_REASON } : { move: 'as-is', providerFinding: finding };
  }
  if (dedupeHorizonSeconds !== undefined && judgeHorizon(message.body, dedupeHorizonSeconds, now).horizon === 'past') {
    const eventId = eventIdOf(message.body);
    if (eventId === undefined || !(options.pastHorizon ?? []).includes(eventId))
      return { skip: pastHorizonReason(dedupeHorizonSeconds) };
    return { move: 'rewrite' };
  }
  return { move: 'as-is' };
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
 *
 * A message past the queue's dedupe horizon stays in the DLQ (the consumer
 * would refuse it again at once), unless its eventId is named in `pastHorizon`:
 * then its copy has occurredAt set to now and the original in the attribute
 * originalOccurredAt (horizon.ts). StartMessageMoveTask moves bodies as they
 * are and every one of them, so it is used only for a queue without a horizon
 * (a stack deployed before consumers had one); a queue with one is always
 * moved message by message, so that nothing past the horizon is moved unasked.
 */
export async function redrive(sqs: SQSClient, queue: DeadLetterQueue, options: RedriveOptions): Promise<RedriveResult> {
  if (queue.kind !== 'consumer' || queue.sourceUrl === undefined)
    throw new Error(`${queue.name} has no source queue to redrive to`);
  const horizon = queue.dedupeHorizonSeconds;
  if ((options.pastHorizon ?? []).length > 0 && horizon === undefined)
    throw new Error(`${queue.name} has no dedupe horizon in the stack outputs: nothing is past it`);
  const wholeQueue = options.all && options.cause === undefined && options.select === undefined;
  if (options.onAws && wholeQueue && options.includePoison && !options.dryRun && horizon === undefined)
    return startMessageMoveTask(sqs, queue.url, queue.sourceUrl);

  const pass: RedrivePass = {
    sqs,
    queue: { ...queue, sourceUrl: queue.sourceUrl },
    options,
    clock: options.now ?? (() => new Date()),
    limit: options.all ? Number.POSITIVE_INFINITY : options.max,
    result: { method: 'receive-send-delete', moved: [], skipped: [], failed: [] },
    seenPastHorizon: new Set<string>(),
    held: [],
  };
  const { result, held, limit } = pass;
  const seen = new Set<string>();
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
      for (const message of batch) await redriveOne(pass, message, batch);
      options.onProgress?.({
        moved: result.moved.length,
        skipped: result.skipped.length,
        failed: result.failed.length,
      });
    }
  } finally {
    await release(sqs, queue.url, held);
  }
  if (horizon !== undefined) {
    const pastReason = pastHorizonReason(horizon);
    result.horizon = {
      dedupeHorizonSeconds: horizon,
      leftPastHorizon: result.skipped.filter((s) => s.reason === pastReason).length,
      rewritten: result.moved.filter((m) => m.originalOccurredAt !== undefined).length,
      notSeen: (options.pastHorizon ?? []).filter((eventId) => !pass.seenPastHorizon.has(eventId)),
    };
  }
  return result;
}

/** One receive-send-delete pass of redrive: where it moves to, what it has done and what it holds. */
interface RedrivePass {
  sqs: SQSClient;
  queue: DeadLetterQueue & { sourceUrl: string };
  options: RedriveOptions;
  clock: () => Date;
  limit: number;
  result: RedriveResult;
  /** Event ids (or message ids) seen past the horizon, to name the --past-horizon ids never seen. */
  seenPastHorizon: Set<string>;
  /** Received and not deleted: made visible again when the pass ends. */
  held: DeadLetter[];
}

/**
 * One received message: skipped (held, with its reason), listed (a dry run), or moved: its provider
 * finding recorded first, a copy sent to the source queue, then the original deleted.
 */
async function redriveOne(pass: RedrivePass, message: DeadLetter, batch: readonly DeadLetter[]): Promise<void> {
  const { sqs, queue, options, result, held, limit } = pass;
  const horizon = queue.dedupeHorizonSeconds;
  const now = pass.clock();
  const decision = redriveDecision(message, options, horizon, now);
  const reason = 'skip' in decision ? decision.skip : undefined;
  const entry: MovedMessage = {
    messageId: message.messageId,
    eventId: eventIdOf(message.body),
    groupId: message.groupId,
    cause: causeOf(message),
  };
  if (horizon !== undefined && judgeHorizon(message.body, horizon, now).horizon === 'past')
    pass.seenPastHorizon.add(entry.eventId ?? message.messageId);
  let body = message.body;
  if ('move' in decision && decision.move === 'rewrite') {
    const rewritten = withFreshOccurredAt(message.body, now);
    body = rewritten.body;
    entry.occurredAt = now.toISOString();
    entry.originalOccurredAt = rewritten.originalOccurredAt;
  }
  if ('move' in decision && decision.providerFinding !== undefined) entry.providerFinding = decision.providerFinding;
  if (reason !== undefined || options.dryRun || result.moved.length >= limit) {
    held.push(message);
    if (reason !== undefined) result.skipped.push({ messageId: message.messageId, reason });
    else if (options.dryRun && result.moved.length < limit) result.moved.push(entry);
    return;
  }
  // The finding first: moved without it, the message would only be refused again.
  if (entry.providerFinding !== undefined) {
    try {
      if (options.recordFinding === undefined) throw new Error('no inbox to record the finding on');
      const event = { eventId: entry.eventId!, tenant: tenantOf(message.body), entityId: entityIdOf(message.body) };
      await options.recordFinding(event, entry.providerFinding);
    } catch (error) {
      held.push(message);
      result.failed.push({ messageId: message.messageId, error: (error as Error).message });
      return;
    }
  }
  try {
    await sendCopy(sqs, queue, message, body, entry);
  } catch (error) {
    held.push(message);
    if (isAccessDenied(error)) {
      // Every send would be refused alike: stop, the batch visible again, and say what to do once.
      held.push(...batch.slice(batch.indexOf(message) + 1));
      throw error;
    }
    result.failed.push({ messageId: message.messageId, error: (error as Error).message });
    return;
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

/**
 * The copy redrive sends to the source queue: marked with the DLQ it came from and, rewritten, its
 * original occurredAt; on FIFO in its group, under a fresh deduplication id.
 */
async function sendCopy(
  sqs: SQSClient,
  queue: DeadLetterQueue & { sourceUrl: string },
  message: DeadLetter,
  body: string,
  entry: MovedMessage,
): Promise<void> {
  await sqs.send(
    new SendMessageCommand({
      QueueUrl: queue.sourceUrl,
      MessageBody: body,
      MessageAttributes: {
        redrivenFrom: { DataType: 'String', StringValue: queue.name },
        ...(entry.originalOccurredAt === undefined
          ? {}
          : { [ORIGINAL_OCCURRED_AT]: { DataType: 'String', StringValue: entry.originalOccurredAt } }),
      },
      ...(queue.fifo
        ? {
            MessageGroupId: message.groupId ?? message.messageId,
            MessageDeduplicationId: `redrive-${randomUUID()}`,
          }
        : {}),
    }),
  );
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
