/**
 * The shop's environment variable names, which its stack sets and its API handlers read (the
 * mechanism's own are in its ENV): one constant on both sides, so a rename cannot leave a
 * function reading a name nobody sets.
 */
export const SHOP_ENV = Object.freeze({
  ordersTable: 'ORDERS_TABLE_NAME',
  idempotencyTable: 'IDEMPOTENCY_TABLE_NAME',
  idempotencyKeyExpirySeconds: 'IDEMPOTENCY_KEY_EXPIRY_SECONDS',
  /** Fulfilment's transition window from the inbox ledger: `read` (unset), `off` or `write` (aws/ledgers.ts LegacyFulfilment). */
  fulfilmentLegacyLedger: 'FULFILMENT_LEGACY_LEDGER',
});
