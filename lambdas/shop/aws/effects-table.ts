/**
 * The shop's effect items in the effects table, beside the mechanism's inbox items (inbox-table.ts,
 * whose INBOX#, EFFECT# and TRIES# prefixes these must not use):
 *
 *   pk = SKU#<sku>                   sk = INVENTORY   reserved stock
 *   pk = CUSTOMER#<customerId>       sk = CUSTOMER    loyalty points
 *   pk = FULFILMENT#<orderId>        sk = FULFILMENT  per-order version for ordering
 */
export const inventoryKey = (sku: string) => ({ pk: `SKU#${sku}`, sk: 'INVENTORY' });
export const customerKey = (customerId: string) => ({ pk: `CUSTOMER#${customerId}`, sk: 'CUSTOMER' });
export const fulfilmentKey = (orderId: string) => ({ pk: `FULFILMENT#${orderId}`, sk: 'FULFILMENT' });
