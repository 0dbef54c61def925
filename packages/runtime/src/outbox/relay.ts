import type { EventEnvelope } from '../envelope';
import { checkOutboxEvent } from './outbox-event';
import type { EventPublisher, OutboxStore, PendingOutboxItem } from './ports';

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
  const marks = await settledInChunks(published, MARKS_IN_FLIGHT, (e) => deps.outbox.markDispatched(e, deps.now()));
  marks.forEach((mark, i) => {
    if (mark.status === 'rejected') failed.add(published[i].eventId);
    else if (mark.value) deps.onFirstDispatch?.(published[i]);
  });
  return failed;
}

/**
 * Dispatched marks (and set-asides) in flight at once: under the SDK client's 50 sockets, so a sweep catching up on
 * 500 items queues no request behind the pool (and logs no socket warning), and a slow one cannot
 * hold the others.
 */
export const MARKS_IN_FLIGHT = 25;

/** `work` over `items`, at most `size` at a time, every outcome in the items' order (as Promise.allSettled). */
async function settledInChunks<T, R>(
  items: readonly T[],
  size: number,
  work: (item: T) => Promise<R>,
): Promise<PromiseSettledResult<R>[]> {
  const settled: PromiseSettledResult<R>[] = [];
  for (let i = 0; i < items.length; i += size)
    settled.push(...(await Promise.allSettled(items.slice(i, i + size).map(work))));
  return settled;
}

/** An outbox item the sweeper cannot publish: it is set aside, and reported on every sweep until repaired. */
export interface MalformedOutboxItem {
  itemKey: string;
  createdAt: string;
  reason: string;
  /**
   * Whether it is out of the pending items the sweep reads (set aside by this sweep or an
   * earlier one). False only when setting it aside failed: it stays where it was, and the
   * next sweep tries again.
   */
  setAside: boolean;
}

/**
 * The safety net behind the stream: republishes outbox items still pending
 * after `minAgeSeconds` (the stream never relayed them, or its records aged
 * out), and reports the age of the oldest pending item for the alarm.
 *
 * Each item is validated first. One that is not a publishable event (no
 * event, a broken shape, characters SQS refuses) is returned as malformed and
 * set aside instead of published: it would fail on every sweep, and throwing
 * would stop the sweep for every good item behind it. Left among the pending
 * items, it would also keep its place among the `maxItems` oldest the sweep
 * reads, on every sweep: `maxItems` of them would hide every newer event for
 * good. Set aside, it is still undispatched (and in the oldest-pending age),
 * and every sweep re-checks up to `maxSetAside` set-aside items: still
 * malformed, they are returned again (so the malformed alarm keeps firing
 * until someone repairs or removes them); repaired, they are published.
 *
 * An item that fails to publish is never set aside: publishing can fail for
 * reasons that pass (a queue throttling, SQS down), so it stays pending and
 * the next sweep retries it.
 */
export async function sweepOutbox(deps: {
  publisher: EventPublisher;
  outbox: OutboxStore;
  now: () => Date;
  minAgeSeconds: number;
  maxItems: number;
  maxSetAside: number;
}): Promise<{
  republished: number;
  failed: number;
  malformed: MalformedOutboxItem[];
  oldestPendingAgeSeconds: number;
}> {
  const now = deps.now();
  // Both read before anything is set aside, so an item this sweep sets aside is not also listed as set aside.
  const [stale, setAside] = await Promise.all([
    deps.outbox.pendingOlderThan(new Date(now.getTime() - deps.minAgeSeconds * 1000), deps.maxItems),
    deps.outbox.setAsideItems(deps.maxSetAside),
  ]);
  const events: EventEnvelope[] = [];
  const malformed: MalformedOutboxItem[] = [];
  const toSetAside: { item: PendingOutboxItem; reason: string }[] = [];
  for (const item of stale) {
    const check = checkOutboxEvent(item.event);
    if (check.ok) events.push(check.event);
    else toSetAside.push({ item, reason: check.reason });
  }
  for (const item of setAside) {
    const check = checkOutboxEvent(item.event);
    if (check.ok)
      events.push(check.event); // repaired: published, which takes it out of the index
    else malformed.push({ itemKey: item.itemKey, createdAt: item.createdAt, reason: check.reason, setAside: true });
  }
  const moves = await settledInChunks(toSetAside, MARKS_IN_FLIGHT, ({ item, reason }) =>
    deps.outbox.setAside(item, reason, now),
  );
  toSetAside.forEach(({ item, reason }, i) =>
    malformed.push({
      itemKey: item.itemKey,
      createdAt: item.createdAt,
      reason,
      // Not moved because it was dispatched, removed or set aside meanwhile: it is out of the pending items either way.
      setAside: moves[i].status === 'fulfilled',
    }),
  );
  const failed = events.length === 0 ? new Set<string>() : await relayOutboxEvents(events, deps);
  const oldest = await deps.outbox.oldestPendingCreatedAt();
  const oldestPendingAgeSeconds = oldest === undefined ? 0 : Math.max(0, (now.getTime() - Date.parse(oldest)) / 1000);
  return { republished: events.length - failed.size, failed: failed.size, malformed, oldestPendingAgeSeconds };
}
