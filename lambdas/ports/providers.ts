/**
 * An external provider (mail, warehouse). It cannot join our transaction, so
 * every call carries an idempotency key, `<consumer>:<eventId>`, and the
 * provider is trusted to perform one effect per key. We may call it again with
 * the same key (a redelivery after the transaction committed but before the
 * ack); that repeat is safe only because of the key.
 */
export interface ExternalProvider {
  send(idempotencyKey: string, payload: Record<string, unknown>): Promise<void>;
}
