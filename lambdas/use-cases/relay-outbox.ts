import type { EventEnvelope } from '../messaging/envelope';
import { checkOutboxEvent } from '../messaging/outbox-event';
import type { EventPublisher, OutboxStore } from '../ports/outbox';

/**
 * Publishes outbox events, then marks each published one dispatched. Returns
 * the ids that failed (to publish or to be marked): the caller reports those
 * for retry. A retry may publish an event twice; consumers dedupe on eventId.
 */
export async function relayOutboxEvents(
  events: readonly EventEnvelope[],
  deps: {
    publisher: EventPublisher;
    outbox: OutboxStore;
    now: () => Date;
    onFirstDispatch?: (event: EventEnvelope) => void;
  },
): Promise<Set<string>> {
  const failed = await deps.publisher.publish(events);
  const published = events.filter((e) => !failed.has(e.eventId));
  const marks = await Promise.allSettled(published.map((e) => deps.outbox.markDispatched(e, deps.now())));
  marks.forEach((mark, i) => {
    if (mark.status === 'rejected') failed.add(published[i].eventId);
    else if (mark.value) deps.onFirstDispatch?.(published[i]);
  });
  return failed;
}

/** An outbox item the sweeper skipped because it can never be published. */
export interface MalformedOutboxItem {
  itemKey: string;
  createdAt: string;
  reason: string;
}

/**
 * The safety net behind the stream: republishes outbox items still pending
 * after `minAgeSeconds` (the stream never relayed them, or its records aged
 * out), and reports the age of the oldest pending item for the alarm.
 *
 * Each item is validated first. One that is not a publishable event (no
 * event, a broken shape, characters SQS refuses) is returned as malformed and
 * skipped: it would fail on every sweep, and throwing would stop the sweep
 * for every good item behind it. It stays pending, so it is reported again
 * on every sweep until someone repairs or removes it.
 */
export async function sweepOutbox(deps: {
  publisher: EventPublisher;
  outbox: OutboxStore;
  now: () => Date;
  minAgeSeconds: number;
  maxItems: number;
}): Promise<{
  republished: number;
  failed: number;
  malformed: MalformedOutboxItem[];
  oldestPendingAgeSeconds: number;
}> {
  const now = deps.now();
  const stale = await deps.outbox.pendingOlderThan(new Date(now.getTime() - deps.minAgeSeconds * 1000), deps.maxItems);
  const events: EventEnvelope[] = [];
  const malformed: MalformedOutboxItem[] = [];
  for (const item of stale) {
    const check = checkOutboxEvent(item.event);
    if (check.ok) events.push(check.event);
    else malformed.push({ itemKey: item.itemKey, createdAt: item.createdAt, reason: check.reason });
  }
  const failed = events.length === 0 ? new Set<string>() : await relayOutboxEvents(events, deps);
  const oldest = await deps.outbox.oldestPendingCreatedAt();
  const oldestPendingAgeSeconds = oldest === undefined ? 0 : Math.max(0, (now.getTime() - Date.parse(oldest)) / 1000);
  return { republished: events.length - failed.size, failed: failed.size, malformed, oldestPendingAgeSeconds };
}
