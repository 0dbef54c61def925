import { effectReadHandler } from '../handlers/effect-read-handler';

/** GET /inventory/{sku}: reserved stock, the fulfilment consumer's effect. */
export const handler = effectReadHandler({
  parameter: 'sku',
  maxLength: 64,
  title: 'Invalid SKU',
  read: (reader, sku) => reader.reservedStock(sku),
  body: (sku, reserved) => ({ sku, reserved }),
  missing: (sku) => `SKU ${sku} has no reservations.`,
});
