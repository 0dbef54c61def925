import type { EffectsReader } from '../ports/ledgers';
import type { OrderRepository } from '../ports/order-repository';

/**
 * A customer's loyalty points as the caller earned them: the points of the caller's own orders for
 * that customer id, never another caller's (each caller's customers are its own: the points item is
 * keyed by the caller, the tenant its events carry). For a caller who placed no order for the
 * customer undefined, exactly as for a customer with no points yet, so the answer never tells that
 * another caller's customer exists.
 */
export async function getCustomerPoints(
  parts: { orders: OrderRepository; effects: EffectsReader },
  query: { caller: string; customerId: string },
): Promise<number | undefined> {
  if (!(await parts.orders.hasPlacedFor(query.caller, query.customerId))) return undefined;
  return parts.effects.customerPoints(query.caller, query.customerId);
}
