import { RESENT_BY_FAULT_ATTRIBUTE } from '@exactly-once/runtime/faults/relay-faults';
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
 * - `eventsResent`: events (by the body's `eventId`) that arrived in a message
 *   the resend fault sent (its `resentByFault` attribute). Not "under a second
 *   message id": the relay's retry after a crash and a redrive do that too, so
 *   a resend that never happened would hide behind them;
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
  eventsResent: number;
  eventsStampedAhead: number;
}

export class DeliveryEvidence {
  readonly counts: DeliveryCounts = {
    redeliveredWhileRunning: 0,
    eventsResent: 0,
    eventsStampedAhead: 0,
  };
  private readonly stampedAhead = new Set<string>();
  /** Message id -> the invocations holding it now. */
  private readonly running = new Map<string, Set<symbol>>();
  /** Invocation -> its messages that were handed over again while it ran. */
  private readonly overtaken = new Map<symbol, Set<string>>();
  private readonly resentEvents = new Set<string>();

  /** Records an invocation's SQS messages; call the returned function with its outcome when it ends. */
  begin(event: unknown): (outcome?: InvocationOutcome) => void {
    const invocation = Symbol('invocation');
    const messages = sqsMessagesOf(event);
    for (const { messageId, eventId, aheadMs, resent } of messages) {
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
      if (resent && !this.resentEvents.has(eventId)) {
        this.resentEvents.add(eventId);
        this.counts.eventsResent++;
      }
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
  messageAttributes?: Record<string, { stringValue?: string } | undefined>;
}

function sqsMessagesOf(event: unknown): { messageId: string; eventId?: string; aheadMs: number; resent: boolean }[] {
  const records = (event as { Records?: unknown } | null)?.Records;
  if (!Array.isArray(records)) return [];
  return records
    .filter((r): r is SqsRecordSeen => (r as SqsRecordSeen | null)?.eventSource === 'aws:sqs')
    .map((r) => {
      const { eventId, occurredAt } = envelopeOf(r.body);
      const aheadMs = Date.parse(occurredAt ?? '') - Number(r.attributes?.SentTimestamp);
      return {
        messageId: r.messageId,
        eventId,
        aheadMs: Number.isNaN(aheadMs) ? 0 : aheadMs,
        resent: r.messageAttributes?.[RESENT_BY_FAULT_ATTRIBUTE]?.stringValue === 'true',
      };
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
