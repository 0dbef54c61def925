import { parseBatchItemFailures } from '../sources/batch-response';

/**
 * What the host sees of the SQS messages it hands to a function, kept as the
 * proof kit's evidence that a delivery fault really fired (a run that only
 * shows "duplicates suppressed" cannot tell which fault caused them):
 * - `redeliveredWhileRunning`: a message handed to the function again while an
 *   invocation holding it was still running, and which that first invocation
 *   then completed (not reported failed): the handler was still working on it
 *   when its visibility ran out. A message the handler gave up and released
 *   early (a transient error, a FIFO group stopped) is reported failed, so it
 *   does not count;
 * - `eventsUnderSeveralMessageIds`: events (by the body's `eventId`) that
 *   arrived under a second message id (the producer sent the event again);
 * - `eventsStampedAhead`: events whose `occurredAt` is more than
 *   {@link STAMPED_AHEAD_MS} after the message was sent (`SentTimestamp`): a
 *   producer clock ahead of the queue's (the clock-skew faults).
 * A crash needs no tracking here: the host counts it as it happens.
 */
export interface InvocationOutcome {
  ok: boolean;
  payload?: unknown;
}

/** How far an event's stamp must be ahead of its message's send to count as stamped ahead. */
export const STAMPED_AHEAD_MS = 60_000;

/** The evidence counters, per function. */
export interface DeliveryCounts {
  redeliveredWhileRunning: number;
  eventsUnderSeveralMessageIds: number;
  eventsStampedAhead: number;
}

export class DeliveryEvidence {
  readonly counts: DeliveryCounts = {
    redeliveredWhileRunning: 0,
    eventsUnderSeveralMessageIds: 0,
    eventsStampedAhead: 0,
  };
  private readonly stampedAhead = new Set<string>();
  /** Message id -> the invocations holding it now. */
  private readonly running = new Map<string, Set<symbol>>();
  /** Invocation -> its messages that were handed over again while it ran. */
  private readonly overtaken = new Map<symbol, Set<string>>();
  private readonly messageIdsByEvent = new Map<string, Set<string>>();

  /** Records an invocation's SQS messages; call the returned function with its outcome when it ends. */
  begin(event: unknown): (outcome?: InvocationOutcome) => void {
    const invocation = Symbol('invocation');
    const messages = sqsMessagesOf(event);
    for (const { messageId, eventId, aheadMs } of messages) {
      const holders = this.running.get(messageId) ?? new Set<symbol>();
      for (const earlier of holders)
        this.overtaken.set(earlier, (this.overtaken.get(earlier) ?? new Set()).add(messageId));
      holders.add(invocation);
      this.running.set(messageId, holders);
      if (eventId === undefined) continue;
      if (aheadMs > STAMPED_AHEAD_MS && !this.stampedAhead.has(eventId)) {
        this.stampedAhead.add(eventId);
        this.counts.eventsStampedAhead++;
      }
      const ids = this.messageIdsByEvent.get(eventId) ?? new Set<string>();
      const before = ids.size;
      ids.add(messageId);
      this.messageIdsByEvent.set(eventId, ids);
      if (before === 1 && ids.size === 2) this.counts.eventsUnderSeveralMessageIds++;
    }
    return (outcome) => {
      for (const { messageId } of messages) {
        const holders = this.running.get(messageId);
        holders?.delete(invocation);
        if (holders?.size === 0) this.running.delete(messageId);
      }
      const overtaken = this.overtaken.get(invocation);
      this.overtaken.delete(invocation);
      if (overtaken === undefined || outcome?.ok !== true) return;
      const failed = parseBatchItemFailures(outcome.payload, new Set(messages.map((m) => m.messageId)));
      if (failed === 'invalid') return;
      for (const messageId of overtaken) if (!failed.includes(messageId)) this.counts.redeliveredWhileRunning++;
    };
  }
}

interface SqsRecordSeen {
  eventSource: string;
  messageId: string;
  body?: string;
  attributes?: { SentTimestamp?: string };
}

function sqsMessagesOf(event: unknown): { messageId: string; eventId?: string; aheadMs: number }[] {
  const records = (event as { Records?: unknown } | null)?.Records;
  if (!Array.isArray(records)) return [];
  return records
    .filter((r): r is SqsRecordSeen => (r as SqsRecordSeen | null)?.eventSource === 'aws:sqs')
    .map((r) => {
      const { eventId, occurredAt } = envelopeOf(r.body);
      const aheadMs = Date.parse(occurredAt ?? '') - Number(r.attributes?.SentTimestamp);
      return { messageId: r.messageId, eventId, aheadMs: Number.isNaN(aheadMs) ? 0 : aheadMs };
    });
}

function envelopeOf(body: string | undefined): { eventId?: string; occurredAt?: string } {
  try {
    const { eventId, occurredAt } =
      (JSON.parse(body ?? '') as { eventId?: unknown; occurredAt?: unknown } | null) ?? {};
    return {
      eventId: typeof eventId === 'string' ? eventId : undefined,
      occurredAt: typeof occurredAt === 'string' ? occurredAt : undefined,
    };
  } catch {
    return {}; // not JSON (poison): no event id to track
  }
}
