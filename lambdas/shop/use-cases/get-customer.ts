import type { EffectsReader } from '../ports/ledgers';
import type { OrderRepository } from '../ports/order-repository';

/**
 * A customer's loyalty points, for a caller who placed an order for that
 * customer. For anyone else undefined, exactly as for a customer with no
 * points yet, so the answer never tells that another caller's customer exists.
 * The scope is checked first: the points of a customer who is not the
 * caller's are never read.
 */
export async function getCustomerPoints(
  parts: { orders: OrderRepository; effects: EffectsReader },
  query: { caller: string; customerId: string },
): Promise<number | undefined> {
  if (!(await parts.orders.hasPlacedFor(query.caller, query.customerId))) return undefined;
  return parts.effects.customerPoints(query.customerId);
}
