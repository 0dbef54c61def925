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
 *   arrived under a second message id (the producer sent the event again).
 * A crash needs no tracking here: the host counts it as it happens.
 */
export interface InvocationOutcome {
  ok: boolean;
  payload?: unknown;
}

export class DeliveryEvidence {
  readonly counts = { redeliveredWhileRunning: 0, eventsUnderSeveralMessageIds: 0 };
  /** Message id -> the invocations holding it now. */
  private readonly running = new Map<string, Set<symbol>>();
  /** Invocation -> its messages that were handed over again while it ran. */
  private readonly overtaken = new Map<symbol, Set<string>>();
  private readonly messageIdsByEvent = new Map<string, Set<string>>();

  /** Records an invocation's SQS messages; call the returned function with its outcome when it ends. */
  begin(event: unknown): (outcome?: InvocationOutcome) => void {
    const invocation = Symbol('invocation');
    const messages = sqsMessagesOf(event);
    for (const { messageId, eventId } of messages) {
      const holders = this.running.get(messageId) ?? new Set<symbol>();
      for (const earlier of holders)
        this.overtaken.set(earlier, (this.overtaken.get(earlier) ?? new Set()).add(messageId));
      holders.add(invocation);
      this.running.set(messageId, holders);
      if (eventId === undefined) continue;
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

function sqsMessagesOf(event: unknown): { messageId: string; eventId?: string }[] {
  const records = (event as { Records?: unknown } | null)?.Records;
  if (!Array.isArray(records)) return [];
  return records
    .filter((r): r is { eventSource: string; messageId: string; body?: string } => r?.eventSource === 'aws:sqs')
    .map((r) => ({ messageId: r.messageId, eventId: eventIdOf(r.body) }));
}

function eventIdOf(body: string | undefined): string | undefined {
  try {
    const eventId = (JSON.parse(body ?? '') as { eventId?: unknown } | null)?.eventId;
    return typeof eventId === 'string' ? eventId : undefined;
  } catch {
    return undefined; // not JSON (poison): no event id to track
  }
}
