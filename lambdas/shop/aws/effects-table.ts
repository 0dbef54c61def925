/**
 * The shop's effect items in the effects table, beside the mechanism's inbox items (inbox-table.ts,
 * whose INBOX#, EFFECT# and TRIES# prefixes these must not use):
 *
 *   pk = SKU#<sku>                   sk = INVENTORY   reserved stock
 *   pk = CUSTOMER#<tenant>#<customerId>  sk = CUSTOMER  loyalty points of the caller's customer (the tenant is the
 *                                                  caller the API authenticated, URI-encoded; an event without
 *                                                  one, written before events carried it: CUSTOMER#<customerId>)
 *   pk = FULFILMENT#<orderId>        sk = FULFILMENT  per-order version for ordering
 */
export const inventoryKey = (sku: string) => ({ pk: `SKU#${sku}`, sk: 'INVENTORY' });
/**
 * A customer's points item, scoped to the tenant (caller) that ordered for it: one caller can neither
 * read nor credit another caller's customer of the same id.
 */
export const customerKey = (tenant: string | undefined, customerId: string) => ({
  pk: tenant === undefined ? `CUSTOMER#${customerId}` : `CUSTOMER#${encodeURIComponent(tenant)}#${customerId}`,
  sk: 'CUSTOMER',
});
export const fulfilmentKey = (orderId: string) => ({ pk: `FULFILMENT#${orderId}`, sk: 'FULFILMENT' });
