import type { EventEnvelope } from '../envelope';

/** Where outbox events go: every consumer route that takes the event's type (packages/runtime/src/outbox/routes.ts). */
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
  /** Its key in the table, to set it aside by. */
  key: { pk: string; sk: string };
  event: unknown;
  createdAt: string;
}

export interface OutboxStore {
  /** Marks an event dispatched, which drops it from the sweeper's pending index; true the first time. */
  markDispatched(event: EventEnvelope, at: Date): Promise<boolean>;
  /** Outbox items not dispatched and created before `olderThan`, oldest first; set-aside items are not among them. */
  pendingOlderThan(olderThan: Date, limit: number): Promise<PendingOutboxItem[]>;
  /**
   * Sets aside a pending item that can never be published: it leaves the items
   * `pendingOlderThan` lists, so it no longer takes a place among the oldest
   * ones, and joins `setAsideItems`. It stays undispatched. False if the item
   * was dispatched, removed or set aside meanwhile.
   */
  setAside(item: PendingOutboxItem, reason: string, at: Date): Promise<boolean>;
  /** The items set aside and still undispatched, oldest first, at most `limit`. */
  setAsideItems(limit: number): Promise<PendingOutboxItem[]>;
  /** Creation time of the oldest undispatched outbox item, if any (set-aside items included). */
  oldestPendingCreatedAt(): Promise<string | undefined>;
}

/** How a publisher made by {@link OutboxWiring.publisherWith} differs from the relay's own. */
export interface PublisherOptions {
  /** The FIFO dedup id of an event; its id by default, so FIFO drops a second send of it within 5 minutes. */
  deduplicationId?: (event: EventEnvelope) => string;
  /** String message attributes every message it sends carries, beside the event's own. */
  attributes?: Readonly<Record<string, string>>;
}

/**
 * What both outbox publishers (the stream relay and the sweeper) run on: the store, a publisher to the
 * consumers' queues and the clock. wiring/outbox-wiring.ts builds it on AWS; the simulation on its own clients.
 */
export interface OutboxWiring {
  publisher: EventPublisher;
  /**
   * Another publisher to the same queues, e.g. with other FIFO dedup ids and a message attribute that
   * marks its messages (the resend fault).
   */
  publisherWith(options: PublisherOptions): EventPublisher;
  outbox: OutboxStore;
  now: () => Date;
}
