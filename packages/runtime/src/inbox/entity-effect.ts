import { PermanentError } from '../errors';
import type { RecordWork } from '../consumer/record-work';
import type { EventEnvelope } from '../envelope';
import type { ApplyOutcome, EntityEffectLedger } from './ports';
import type { ExternalProvider } from '../provider/provider';
import { callProviderIfOwed } from '../provider/call-provider-if-owed';

/**
 * What applyEntityEffect works with: the consumer's name and event types (from its spec), its
 * ledger and its provider (from its wiring).
 *
 * @example The deps a consumer made by `npm run new:consumer` passes, per record
 * ```ts
 * const deps: EntityEffectDeps = {
 *   consumer: SPEC.name,
 *   eventTypes: SPEC.eventTypes,
 *   ledger,
 *   provider: wiring.provider(SPEC.name),
 * };
 * ```
 */
export interface EntityEffectDeps {
  /** The consumer's spec name: the inbox prefix and the provider key's prefix. */
  consumer: string;
  /** The spec's event types; any other type is dead-lettered. */
  eventTypes: readonly string[];
  ledger: EntityEffectLedger;
  /**
   * The provider its spec names, called once per event it applies. Absent for a consumer whose effect is
   * its own state alone (its spec names no provider; `npm run new:consumer -- <name> --no-provider`):
   * the claim and the ledger's writes are the whole effect, and no call is made.
   */
  provider?: ExternalProvider;
  /**
   * What the provider is sent for an event the consumer takes, shaped from the event (a billing call
   * needs the amount: read it from `event.payload` with your schema). It runs before anything is
   * written, on every delivery (a duplicate that still owes the call sends what it returns), so it
   * must depend on the event alone. A payload no retry can fix is a PermanentError: the event goes
   * to the DLQ with no effect applied and no call made.
   * @default the event's identity: `{ consumer, eventId, type, entityId, version }`
   *
   * @example A billing consumer sends the order's amount
   * ```ts
   * const billed = z.object({ totalCents: z.int().min(1) });
   * const deps: EntityEffectDeps = {
   *   ...generated,
   *   providerRequest: (event) => ({
   *     orderId: event.entityId,
   *     amountCents: parseWith(billed, event.payload, 'a billed order').totalCents,
   *   }),
   * };
   * ```
   */
  providerRequest?: (event: EventEnvelope) => Record<string, unknown>;
}

/** The request the provider gets when the consumer shapes none: which event, of which entity, for which consumer. */
function eventIdentity(consumer: string, event: EventEnvelope): Record<string, unknown> {
  return { consumer, eventId: event.eventId, type: event.type, entityId: event.entityId, version: event.version };
}

/**
 * The generic effect of a consumer made by `npm run new:consumer`, on any
 * envelope: the ledger counts the event on its entity under the inbox claim,
 * then the provider hears of it under `providerKey(consumer, event)` (with the event's
 * tenant, or the key the event's claim recorded) while the
 * call is owed (call-provider-if-owed.ts), sent `providerRequest(event)` (the
 * event's identity unless the consumer shapes it). A type the consumer does not
 * take is a PermanentError: no retry can make it one it takes.
 *
 * @example A generated consumer's apply (its entry module)
 * ```ts
 * import { applyEntityEffect } from '..';
 * import { DynamoDbEntityEffectLedger } from '../aws';
 *
 * const ledger = new DynamoDbEntityEffectLedger(wiring.documents, wiring.ledgerOptions);
 * const provider = wiring.provider(SPEC.name);
 * const apply = (event: EventEnvelope, record: SQSRecord, work: RecordWork) =>
 *   applyEntityEffect(event, { consumer: SPEC.name, eventTypes: SPEC.eventTypes, ledger, provider }, work);
 * ```
 */
export async function applyEntityEffect(
  event: EventEnvelope,
  deps: EntityEffectDeps,
  work?: RecordWork,
): Promise<ApplyOutcome> {
  if (!deps.eventTypes.includes(event.type)) {
    throw new PermanentError(
      'UnsupportedEventType',
      `${deps.consumer} takes ${deps.eventTypes.join(', ')} only, got ${event.type}`,
    );
  }
  // Shaped before the ledger writes: a payload it refuses must leave no effect behind that owes a call.
  const request = deps.providerRequest?.(event) ?? eventIdentity(deps.consumer, event);
  const result = await deps.ledger.apply(event, work);
  const { provider } = deps;
  // No provider: the claim committed with the effect is all there is; a duplicate found it and wrote nothing.
  if (provider === undefined) return result.outcome;
  return callProviderIfOwed(result, event, deps.ledger, (signal, key) => provider.send(key, request, { signal }), work);
}
