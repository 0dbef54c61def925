import { outboxItemKey } from '@exactly-once/runtime/aws';

/**
 * Layout of the Orders table (single table: orders, their outbox, and which
 * caller may read which customer).
 *
 *   pk = ORDER#<orderId>, sk = ORDER             the order
 *   pk = ORDER#<orderId>, sk = OUTBOX#<eventId>  an outbox item (outbox-table.ts), written in the same transaction
 *   pk = CALLER#<caller>#CUSTOMER#<customerId>,  the caller placed this order for the customer, so may
 *   sk = ORDER#<orderId>                         read it (GET /customers/{id}); same transaction too
 *
 * The customer access item is one per order, not one per (caller, customer):
 * concurrent orders of one caller for one customer would otherwise put the same
 * item in two transactions at once, and DynamoDB cancels one of them
 * (TransactionConflict, a 503). A read asks whether the partition holds any.
 * The key is unambiguous because a customer id is an identifier (no `#`):
 * everything after the last `#` is the customer, everything between `CALLER#`
 * and `#CUSTOMER#<customerId>` the caller.
 */
export const ORDER_SK = 'ORDER';
export const ENTITY_ORDER = 'ORDER';
export const ENTITY_CUSTOMER_ACCESS = 'CUSTOMER_ACCESS';
/** An order's partition key prefix; its outbox items live in that partition (the stack tells the relay). */
export const ORDER_PK_PREFIX = 'ORDER#';
/** Every customer access item's partition key starts with it (the read function's IAM grant is limited to it). */
export const CUSTOMER_ACCESS_PK_PREFIX = 'CALLER#';

export function orderPk(orderId: string): string {
  return `${ORDER_PK_PREFIX}${orderId}`;
}

/** The partition of a caller's access to a customer: one item per order the caller placed for it. */
export function customerAccessPk(caller: string, customerId: string): string {
  return `${CUSTOMER_ACCESS_PK_PREFIX}${caller}#CUSTOMER#${customerId}`;
}

export function customerAccessKey(order: { caller: string; customerId: string; orderId: string }): {
  pk: string;
  sk: string;
} {
  return { pk: customerAccessPk(order.caller, order.customerId), sk: orderPk(order.orderId) };
}

/** Where an order event's outbox item lives: in the order's partition. */
export function outboxKey(event: { entityId: string; eventId: string }): { pk: string; sk: string } {
  return outboxItemKey(event, ORDER_PK_PREFIX);
}
