/**
 * The mechanism's items in the effects table: each consumer's inbox and its bookkeeping. They share
 * the table with the effects they guard so that a claim and its effect commit in one transaction.
 *
 *   pk = INBOX#<consumer>#<eventId>  sk = INBOX       the claim (TTL attribute `expiresAt`), and what became
 *                                                     of its provider call: `providerCallDoneAt` once the
 *                                                     provider accepted it, `supersededBy` once a later event
 *                                                     of the same entity was applied (its call must not follow);
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
 * @example The shop's effects table (lib/shop/storage.ts)
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

export const inboxKey = (consumer: string, eventId: string) => ({ pk: `INBOX#${consumer}#${eventId}`, sk: 'INBOX' });
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
