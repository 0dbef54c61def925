import { type ApplyOutcome, callProviderIfOwed, type ExternalProvider, type RecordWork } from '@exactly-once/runtime';
import type { OrderEvent, OrderPlacedEvent } from '../domain/events';
import { loyaltyPoints } from '../domain/order';
import type { FulfilmentLedger, LoyaltyLedger } from '../ports/ledgers';

/**
 * The two consumers' use cases. Each applies its effect through a ledger that
 * claims the eventId in the same write (fulfilment: on the order's own item, guarded by the order's
 * version; loyalty: an inbox entry in the points' transaction), then calls its external provider
 * under the key the claim recorded (`providerKey(consumer, event)`: `<consumer>@<tenant hash>:<eventId>`
 * for an order's events, which carry their caller as tenant) and records the call done where the claim is.
 *
 * A duplicate calls the provider only while the call is owed: the transaction
 * may have committed on an earlier delivery that crashed before reaching the
 * provider, or before recording it (the key makes that one repeat harmless).
 * Once recorded done, or once a later event of the same order superseded this
 * one, a duplicate stays away from the provider: real providers forget keys,
 * and a PICK after a CANCEL_PICK is wrong whatever the key. On `stale` there is
 * nothing to tell anyone. `work` carries the record's deadline (its signal
 * reaches every write and the provider call) and the provider-call lease.
 */
export async function fulfilOrderEvent(
  event: OrderEvent,
  deps: { ledger: FulfilmentLedger; warehouse: ExternalProvider },
  work?: RecordWork,
): Promise<ApplyOutcome> {
  const result =
    event.type === 'OrderPlaced' ? await deps.ledger.reserve(event, work) : await deps.ledger.release(event, work);
  return callProviderIfOwed(
    result,
    event,
    deps.ledger,
    (signal, key) =>
      deps.warehouse.send(
        key,
        {
          instruction: event.type === 'OrderPlaced' ? 'PICK' : 'CANCEL_PICK',
          orderId: event.entityId,
          items: event.payload.items,
        },
        { signal },
      ),
    work,
  );
}

export async function creditLoyaltyPoints(
  event: OrderPlacedEvent,
  deps: { ledger: LoyaltyLedger; mail: ExternalProvider },
  work?: RecordWork,
): Promise<ApplyOutcome> {
  const points = loyaltyPoints(event.payload.totalCents);
  const result = await deps.ledger.credit(event, points, work);
  return callProviderIfOwed(
    result,
    event,
    deps.ledger,
    (signal, key) =>
      deps.mail.send(
        key,
        {
          template: 'order-confirmation',
          customerId: event.payload.customerId,
          orderId: event.entityId,
          pointsEarned: points,
        },
        { signal },
      ),
    work,
  );
}
