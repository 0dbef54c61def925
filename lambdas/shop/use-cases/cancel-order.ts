import { orderCancelledEvent } from '../domain/events';
import type { OrderView } from '../domain/order';
import type { OrderRepository } from '../ports/order-repository';
import { toView } from './place-order';

export type CancelOrderOutcome = { kind: 'cancelled'; order: OrderView } | { kind: 'not-found' };

/**
 * Cancelling is idempotent by nature: the state change is conditional on
 * PLACED, so a second cancel changes nothing and returns the cancelled order.
 * Orders are visible only to the caller who placed them.
 */
export async function cancelOrder(
  orders: OrderRepository,
  command: { caller: string; orderId: string; now: Date },
): Promise<CancelOrderOutcome> {
  const existing = await orders.get(command.orderId);
  if (existing === undefined || existing.caller !== command.caller) return { kind: 'not-found' };
  if (existing.status === 'CANCELLED') return { kind: 'cancelled', order: toView(existing) };

  const cancelledAt = command.now.toISOString();
  const event = orderCancelledEvent(existing, cancelledAt);
  const result = await orders.cancel(existing, cancelledAt, event);
  if (result.kind === 'cancelled') return { kind: 'cancelled', order: toView(result.order) };
  // Lost a race with a concurrent cancel: the order is cancelled either way.
  if (result.order?.status === 'CANCELLED') return { kind: 'cancelled', order: toView(result.order) };
  return { kind: 'not-found' };
}
