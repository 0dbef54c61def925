/**
 * What the host sees of the SQS messages it hands to a function, kept as the
 * proof kit's evidence that a delivery fault really fired (a run that only
 * shows "duplicates suppressed" cannot tell which fault caused them):
 * - `redeliveredWhileRunning`: a message id handed to the function again while
 *   an invocation holding it is still running (a handler outlived its visibility);
 * - `eventsUnderSeveralMessageIds`: events (by the body's `eventId`) that
 *   arrived under a second message id (the producer sent the event again).
 * A crash needs no tracking here: the host counts it as it happens.
 */
export class DeliveryEvidence {
  readonly counts = { redeliveredWhileRunning: 0, eventsUnderSeveralMessageIds: 0 };
  private readonly running = new Map<string, number>();
  private readonly messageIdsByEvent = new Map<string, Set<string>>();

  /** Records an invocation's SQS messages; call the returned function when the invocation ends. */
  begin(event: unknown): () => void {
    const messages = sqsMessagesOf(event);
    for (const { messageId, eventId } of messages) {
      if ((this.running.get(messageId) ?? 0) > 0) this.counts.redeliveredWhileRunning++;
      this.running.set(messageId, (this.running.get(messageId) ?? 0) + 1);
      if (eventId === undefined) continue;
      const ids = this.messageIdsByEvent.get(eventId) ?? new Set<string>();
      const before = ids.size;
      ids.add(messageId);
      this.messageIdsByEvent.set(eventId, ids);
      if (before === 1 && ids.size === 2) this.counts.eventsUnderSeveralMessageIds++;
    }
    return () => {
      for (const { messageId } of messages) {
        const left = (this.running.get(messageId) ?? 1) - 1;
        if (left > 0) this.running.set(messageId, left);
        else this.running.delete(messageId);
      }
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
