import type { OrderCancelledEvent, OrderPlacedEvent } from '../domain/events';
import type { EventEnvelope } from '../messaging/envelope';

/**
 * What applying an event did:
 * - applied: the inbox claim and the effect committed together, just now;
 * - duplicate: the inbox already held this consumer's claim on the eventId, so
 *   the effect happened before (the only outcome that means "already done");
 * - stale: a newer event for the same order was applied first; nothing to do.
 */
export type ApplyOutcome = 'applied' | 'duplicate' | 'stale';

/**
 * The outcome, and whether the external provider still has to hear of the
 * event. Read from the inbox entry itself (returned by the failed claim on a
 * duplicate), never with an extra read:
 * - applied: pending, the call comes right after the commit;
 * - duplicate: pending only if no earlier delivery recorded the call done and no
 *   later event of the same entity superseded this one (a redriven OrderPlaced
 *   must not send PICK after CANCEL_PICK);
 * - stale: never.
 */
export interface LedgerResult {
  outcome: ApplyOutcome;
  providerCallPending: boolean;
}

/** The inbox's record of a provider call, shared by both ledgers. */
export interface ProviderCallRecord {
  /** The consumer whose inbox this is (its spec name): the prefix of its provider keys too. */
  readonly consumer: string;
  /** Marks the provider call for this event done on its inbox entry (after the provider accepted it). */
  recordProviderCallDone(eventId: string): Promise<void>;
}

/** Stock reservations, applied per order in version order (FIFO consumer). */
export interface FulfilmentLedger extends ProviderCallRecord {
  /** Inbox claim + fulfilment state 0 -> 1 (RESERVED) + `reserved += qty` per SKU, in one transaction. */
  reserve(event: OrderPlacedEvent): Promise<LedgerResult>;
  /**
   * Inbox claim + state 1 -> 2 (RELEASED) + `reserved -= qty` + the OrderPlaced
   * inbox entry marked superseded, or 0 -> 2 when nothing was reserved yet.
   */
  release(event: OrderCancelledEvent): Promise<LedgerResult>;
}

/** Loyalty points (standard-queue consumer). Nothing supersedes a credit: points are not taken back. */
export interface LoyaltyLedger extends ProviderCallRecord {
  /** Inbox claim + `points += n` on the customer, in one transaction. */
  credit(event: OrderPlacedEvent, points: number): Promise<LedgerResult>;
}

/**
 * The generic effect of a consumer made by `npm run new:consumer`: a count of
 * the events applied per entity. It knows no domain, and it is not idempotent
 * on its own (an ADD), so a missing inbox claim shows as a double count.
 * Nothing supersedes it: every event's provider call is owed until recorded done.
 */
export interface EntityEffectLedger extends ProviderCallRecord {
  /** Inbox claim + `appliedCount += 1` and `lastEventId` on the consumer's item for `event.entityId`, in one transaction. */
  apply(event: EventEnvelope): Promise<LedgerResult>;
}

/** Read models for the API. */
export interface EffectsReader {
  customerPoints(customerId: string): Promise<number | undefined>;
  reservedStock(sku: string): Promise<number | undefined>;
}
