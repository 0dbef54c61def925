import { orderPlacedEvent } from '../domain/events';
import { deriveOrderId, orderTotalCents, type OrderView, type PlaceOrderRequest } from '../domain/order';
import type { OrderRepository, StoredOrder } from '../ports/order-repository';

export interface PlaceOrderCommand {
  caller: string;
  idempotencyKey: string;
  fingerprint: string;
  request: PlaceOrderRequest;
  now: Date;
}

/**
 * The key was used before for a different request and its idempotency record
 * is gone (expired or lost): the order it made is still there, so refuse.
 */
export class IdempotencyKeyReusedError extends Error {
  constructor(readonly orderId: string) {
    super(`Idempotency key already produced order ${orderId} for a different request`);
    this.name = 'IdempotencyKeyReusedError';
  }
}

export async function placeOrder(orders: OrderRepository, command: PlaceOrderCommand): Promise<OrderView> {
  const orderId = deriveOrderId(command.caller, command.idempotencyKey);
  const createdAt = command.now.toISOString();
  const totalCents = orderTotalCents(command.request.items);
  const order: StoredOrder = {
    orderId,
    status: 'PLACED',
    customerId: command.request.customerId,
    items: command.request.items,
    totalCents,
    createdAt,
    caller: command.caller,
    fingerprint: command.fingerprint,
  };
  const event = orderPlacedEvent(order, createdAt);

  const result = await orders.place(order, event);
  if (result.kind === 'created') return toView(order);

  // A retry after a crash between the order transaction and the idempotency
  // record: the order exists, so answer with it rather than failing or duplicating.
  if (result.order.fingerprint !== command.fingerprint) throw new IdempotencyKeyReusedError(orderId);
  return toView(result.order);
}

export function toView(order: StoredOrder): OrderView {
  const view: OrderView = {
    orderId: order.orderId,
    status: order.status,
    customerId: order.customerId,
    items: order.items,
    totalCents: order.totalCents,
    createdAt: order.createdAt,
  };
  if (order.cancelledAt !== undefined) view.cancelledAt = order.cancelledAt;
  return view;
}
