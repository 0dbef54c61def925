import { inboxPk } from '../inbox/keys';

/**
 * The mechanism's items in the effects table: each consumer's inbox and its bookkeeping. They share
 * the table with the effects they guard so that a claim and its effect commit in one transaction.
 *
 *   pk = INBOX#<consumer>#<eventId>  sk = INBOX       the claim (TTL attribute `expiresAt`, counted from the later
 *   (INBOX#<consumer>#<tenant>#<eventId>              of claim time and the event's occurredAt), the event's
 *    for an event with a tenant)                      `fingerprint` (inbox/fingerprint.ts), and what became
 *                                                     of its provider call: `providerKey`, the key it is owed
 *                                                     under, `providerCallDoneAt` once the provider accepted it,
 *                                                     `supersededBy` (with that event's entity and version) once
 *                                                     a later event of the same entity was applied (its call must
 *                                                     not follow);
 *                                                     `providerCallLeaseUntil`/`-Holder`: the delivery that may call
 *                                                     the provider now (taken by the claim, or by a duplicate that
 *                                                     owes the call), so two copies never call at once
 *   pk = EFFECT#<consumer>#<entityId> sk = EFFECT     a generated consumer's effect (new:consumer): `appliedCount`
 *                                                     of events applied to the entity, and `lastEventId`
 *   pk = TRIES#<consumer>#<messageId> sk = TRIES     the FIFO consumer's count of failed tries of a message
 *                                                     (dynamodb-try-counter.ts), with the same TTL attribute
 *
 * The prefixes INBOX#, EFFECT# and TRIES# are reserved: an application's own effect items must use
 * other partition-key prefixes, or a claim could collide with an effect.
 */

/**
 * The TTL attribute of the inbox claims (epoch seconds). The effects table's TTL must be set on
 * this attribute, or claims are never deleted and the table grows forever.
 *
 * @example The effects table ExactlyOnce makes (packages/cdk/src/exactly-once.ts)
 * ```ts
 * new dynamodb.Table(this, 'Effects', { ...common, partitionKey, sortKey, timeToLiveAttribute: INBOX_TTL_ATTRIBUTE });
 * ```
 */
export const INBOX_TTL_ATTRIBUTE = 'expiresAt';
export const PROVIDER_CALL_DONE_ATTRIBUTE = 'providerCallDoneAt';
export const SUPERSEDED_BY_ATTRIBUTE = 'supersededBy';
/**
 * Set by a person (the DLQ tool) who checked at the provider that an owed call was NOT performed: the
 * provider's key window is counted from here instead of the claim, so the call may be made once more.
 */
export const PROVIDER_KEY_WINDOW_FROM_ATTRIBUTE = 'providerKeyWindowFrom';
/** Epoch ms until which one delivery holds the right to call the provider for the event, and who holds it. */
export const PROVIDER_CALL_LEASE_ATTRIBUTE = 'providerCallLeaseUntil';
export const PROVIDER_CALL_LEASE_HOLDER_ATTRIBUTE = 'providerCallLeaseHolder';

/**
 * The provider key the event's call is owed under, as the claim's code built it (inbox/keys.ts): a duplicate
 * sends under it, whatever shape its own code builds, so a call owed by one release is never repeated under
 * another release's key. A claim without it was written by a release before it: its key is `<consumer>:<eventId>`.
 */
export const PROVIDER_KEY_ATTRIBUTE = 'providerKey';
/**
 * On an entry a supersede mark wrote (or marked): the superseding event's entity and version. A later claim
 * on an entry the mark created (no claim of its own) is stale if it is an event of that entity at or below
 * that version, and EventIdReused otherwise: another event under an id the mark took.
 */
export const SUPERSEDED_BY_ENTITY_ATTRIBUTE = 'supersededByEntityId';
export const SUPERSEDED_BY_VERSION_ATTRIBUTE = 'supersededByVersion';

/** The fingerprint of the event a claim was written for (inbox/fingerprint.ts); absent on claims written before it was. */
export const FINGERPRINT_ATTRIBUTE = 'fingerprint';

/**
 * The key of a consumer's inbox entry for an event, in the shape this release writes by default:
 * `INBOX#<consumer>#<eventId>`, or with the event's verified tenant `INBOX#<consumer>#<tenant>#<eventId>`
 * (the tenant URI-encoded, the eventId's `#` and `%` escaped, so no two events' keys meet). An event
 * without a tenant keeps the key it always had unless its eventId holds `#` or `%`. The other shapes a
 * claim may live under are in inbox/keys.ts; a ledger looks under each (see its `keys` option).
 */
export const inboxKey = (consumer: string, eventId: string, tenant?: string) => ({
  pk: inboxPk(consumer, { eventId, tenant }),
  sk: 'INBOX',
});
export const entityEffectKey = (consumer: string, entityId: string) => ({
  pk: `EFFECT#${consumer}#${entityId}`,
  sk: 'EFFECT',
});
export const triesKey = (consumer: string, messageId: string) => ({
  pk: `TRIES#${consumer}#${messageId}`,
  sk: 'TRIES',
});

/** The TTL attribute's value for an item written at `now` that must live `ttlSeconds` (epoch seconds). */
export const expiresAfter = (now: Date, ttlSeconds: number): number => Math.floor(now.getTime() / 1000) + ttlSeconds;

/**
 * The TTL of an event's claim: `ttlSeconds` from the later of `now` and the event's `occurredAt`.
 * The horizon is judged on `occurredAt`, so a claim must live that long after it: an event stamped
 * ahead of the consumer's clock (within the skew margin) would otherwise lose its claim before its
 * horizon passed, and a later copy would apply it again.
 */
export function claimExpiresAt(now: Date, occurredAt: string, ttlSeconds: number): number {
  const occurred = Date.parse(occurredAt);
  const from = Number.isNaN(occurred) ? now.getTime() : Math.max(now.getTime(), occurred);
  return expiresAfter(new Date(from), ttlSeconds);
}
