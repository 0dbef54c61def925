import { effectReadHandler } from '../api/effect-read-handler';
import { IDENTIFIER_RULE } from '../domain/order';

/**
 * GET /inventory/{sku}: reserved stock, the fulfilment consumer's effect. A
 * shared read model of the shop's stock, not any caller's data: every
 * authenticated caller reads the same number, so it is not scoped to the caller.
 */
export const handler = effectReadHandler({
  parameter: 'sku',
  // The SKUs an order accepts: no other SKU can have reservations.
  ...IDENTIFIER_RULE,
  title: 'Invalid SKU',
  scope: 'shared',
  read: (reader, sku) => reader.reservedStock(sku),
  body: (sku, reserved) => ({ sku, reserved }),
  missing: (sku) => `SKU ${sku} has no reservations.`,
});
