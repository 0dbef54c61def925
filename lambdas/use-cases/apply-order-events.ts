import type { OrderEvent, OrderPlacedEvent } from '../domain/events';
import { loyaltyPoints } from '../domain/order';
import type { ApplyOutcome, FulfilmentLedger, LoyaltyLedger } from '../ports/ledgers';
import type { ExternalProvider } from '../ports/providers';

/**
 * The two consumers' use cases. Each applies its effect through a ledger that
 * claims the eventId in the same transaction, then calls its external provider
 * with the key `<consumer>:<eventId>`.
 *
 * The provider is called on `duplicate` too: the transaction may have committed
 * on an earlier delivery that crashed before reaching the provider. The key
 * makes the repeat harmless. On `stale` there is nothing to tell anyone.
 */
export async function fulfilOrderEvent(
  event: OrderEvent,
  deps: { ledger: FulfilmentLedger; warehouse: ExternalProvider },
): Promise<ApplyOutcome> {
  const outcome =
    event.eventType === 'OrderPlaced' ? await deps.ledger.reserve(event) : await deps.ledger.release(event);
  if (outcome !== 'stale') {
    await deps.warehouse.send(`fulfilment:${event.eventId}`, {
      instruction: event.eventType === 'OrderPlaced' ? 'PICK' : 'CANCEL_PICK',
      orderId: event.orderId,
      items: event.items,
    });
  }
  return outcome;
}

export async function creditLoyaltyPoints(
  event: OrderPlacedEvent,
  deps: { ledger: LoyaltyLedger; mail: ExternalProvider },
): Promise<ApplyOutcome> {
  const points = loyaltyPoints(event.totalCents);
  const outcome = await deps.ledger.credit(event, points);
  await deps.mail.send(`loyalty:${event.eventId}`, {
    template: 'order-confirmation',
    customerId: event.customerId,
    orderId: event.orderId,
    pointsEarned: points,
  });
  return outcome;
}
