import type { EventEnvelope } from '../messaging/envelope';

/** Where outbox events go: every consumer route that takes the event's type (lambdas/messaging/routes.ts). */
export interface EventPublisher {
  /**
   * Publishes every event; returns the ids of the events that could not be
   * published (any destination failed). Never throws for a per-entry failure.
   */
  publish(events: readonly EventEnvelope[]): Promise<Set<string>>;
}

/** A pending outbox item as stored: its event is unchecked until the sweeper validates it. */
export interface PendingOutboxItem {
  /** Where the item lives (for logs): `<pk>/<sk>`. */
  itemKey: string;
  event: unknown;
  createdAt: string;
}

export interface OutboxStore {
  /** Marks an event dispatched, which drops it from the sweeper's pending index; true the first time. */
  markDispatched(event: EventEnvelope, at: Date): Promise<boolean>;
  /** Outbox items not dispatched and created before `olderThan`. */
  pendingOlderThan(olderThan: Date, limit: number): Promise<PendingOutboxItem[]>;
  /** Creation time of the oldest undispatched outbox item, if any. */
  oldestPendingCreatedAt(): Promise<string | undefined>;
}
