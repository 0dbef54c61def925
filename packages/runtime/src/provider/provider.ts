/**
 * An external provider (mail, warehouse). It cannot join our transaction, so
 * every call carries an idempotency key, `<consumer>:<eventId>` (with the tenant's hash when the event
 * has a tenant: inbox/keys.ts `providerKey`), and the
 * provider is trusted to perform one effect per key for as long as it remembers
 * the key (Stripe: 24 h). We call it again only while our inbox does not record
 * the call as done: after a crash between the commit and the call, or between
 * the call and its record. Once recorded, a duplicate (a redrive weeks later,
 * when the provider has forgotten the key) never reaches it.
 *
 * @example The loyalty use case's call, under its key and with the record's signal
 * ```ts
 * import { type ExternalProvider, providerKey } from '..';
 *
 * const mail: ExternalProvider = wiring.provider('mail');
 * await mail.send(providerKey('loyalty', event), { template: 'order-confirmation', orderId: event.entityId }, { signal });
 * ```
 */
export interface ExternalProvider {
  /** `signal` aborts at the record's deadline: an adapter must give up the call then (its outcome is unknown). */
  send(idempotencyKey: string, payload: Record<string, unknown>, options?: { signal?: AbortSignal }): Promise<void>;
}
