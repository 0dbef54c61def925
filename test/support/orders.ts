import {
  orderCancelledEvent,
  orderPlacedEvent,
  type OrderCancelledEvent,
  type OrderPlacedEvent,
} from '../../lambdas/shop/domain/events';
import { deriveOrderId, orderTotalCents, type OrderLine } from '../../lambdas/shop/domain/order';
import type { StoredOrder } from '../../lambdas/shop/ports/order-repository';
import { VALID_ORDER } from './api-events';

export const ALICE = 'arn:aws:iam::123456789012:user/alice';
export const BOB = 'arn:aws:iam::123456789012:user/bob';

/** An order item as the Orders table holds it (keys, entity and version included). */
export function storedOrderItem(
  overrides: Partial<StoredOrder> & { caller?: string; key?: string } = {},
): Record<string, unknown> {
  const { key = 'key-1', ...rest } = overrides;
  const caller = rest.caller ?? ALICE;
  const orderId = rest.orderId ?? deriveOrderId(caller, key);
  const order: StoredOrder = {
    orderId,
    status: 'PLACED',
    customerId: VALID_ORDER.customerId,
    items: VALID_ORDER.items,
    totalCents: orderTotalCents(VALID_ORDER.items),
    createdAt: '2030-01-02T03:04:05.000Z',
    caller,
    fingerprint: 'f'.repeat(64),
    ...rest,
  };
  return {
    pk: `ORDER#${orderId}`,
    sk: 'ORDER',
    entity: 'ORDER',
    version: order.status === 'CANCELLED' ? 2 : 1,
    ...order,
  };
}

/** The public view of a stored item: what the API may show. */
export function viewOf(item: Record<string, unknown>): Record<string, unknown> {
  const {
    pk: _pk,
    sk: _sk,
    entity: _entity,
    version: _version,
    caller: _caller,
    fingerprint: _fingerprint,
    ...view
  } = item;
  return view;
}

const ONE_LINE: OrderLine[] = [{ sku: 'SKU-A', quantity: 2, unitPriceCents: 500 }];

/**
 * When the fixtures' events occurred: two hours before the tests started, by the real clock, so a
 * consumer on the real clock finds them inside its dedupe horizon and not ahead of its clock.
 */
export const PLACED_AT = new Date(Math.floor(Date.now() / 1000) * 1000 - 2 * 3_600_000).toISOString();
/** An hour after PLACED_AT. */
export const CANCELLED_AT = new Date(Date.parse(PLACED_AT) + 3_600_000).toISOString();

/** An order's OrderPlaced event, as the domain builds it (customer `cust-<orderId>`), at PLACED_AT. */
export function placedEvent(orderId: string, items: OrderLine[] = ONE_LINE): OrderPlacedEvent {
  return orderPlacedEvent(
    { orderId, customerId: `cust-${orderId}`, items, totalCents: orderTotalCents(items) },
    PLACED_AT,
  );
}

/** The same order's OrderCancelled event, an hour later (CANCELLED_AT). */
export function cancelledEvent(orderId: string, items: OrderLine[] = ONE_LINE): OrderCancelledEvent {
  return orderCancelledEvent({ orderId, customerId: `cust-${orderId}`, items }, CANCELLED_AT);
}
