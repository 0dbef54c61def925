import type { OrderView } from '../domain/order';
import type { OrderRepository } from '../ports/order-repository';
import { toView } from './place-order';

/** Orders are visible only to the caller who placed them; anyone else sees 404. */
export async function getOrder(
  orders: OrderRepository,
  query: { caller: string; orderId: string },
): Promise<OrderView | undefined> {
  const order = await orders.get(query.orderId);
  if (order === undefined || order.caller !== query.caller) return undefined;
  return toView(order);
}
