import { effectReadHandler, effectsReaderFromEnv } from '../api/effect-read-handler';
import { IDENTIFIER_RULE } from '../domain/order';
import type { EffectsReader } from '../ports/ledgers';

/** What GET /inventory/{sku} runs on (deployed: `partsFromEnv`, below). */
export interface Parts {
  effects: EffectsReader;
}

/**
 * GET /inventory/{sku}: reserved stock, the fulfilment consumer's effect. A
 * shared read model of the shop's stock, not any caller's data: every
 * authenticated caller reads the same number, so it is not scoped to the caller.
 */
export function makeHandler({ effects }: Parts) {
  return effectReadHandler({
    reader: effects,
    parameter: 'sku',
    // The SKUs an order accepts: no other SKU can have reservations.
    ...IDENTIFIER_RULE,
    title: 'Invalid SKU',
    scope: 'shared',
    read: (reader, sku) => reader.reservedStock(sku),
    body: (sku, reserved) => ({ sku, reserved }),
    missing: (sku) => `SKU ${sku} has no reservations.`,
  });
}

/** The deployed parts, from the environment the stack sets: read once, at cold start. */
export function partsFromEnv(): Parts {
  return { effects: effectsReaderFromEnv() };
}
