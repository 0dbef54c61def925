import { createHash } from 'node:crypto';
import type { EventEnvelope } from '../envelope';

/**
 * The key shapes the inbox and the provider keys have had. Each release writes one shape and finds a
 * claim under every shape a claim of a running or recent release may have (aws/inbox-ledger.ts), because
 * a stack update runs old and new functions side by side and a rollback goes back:
 * - 1: `INBOX#<consumer>#<eventId>` for every event; provider key `<consumer>:<eventId>`;
 * - 2: the tenant in the inbox key, `INBOX#<consumer>#<tenant>#<eventId>` (tenant URI-encoded, eventId
 *   as sent); provider key `<consumer>:<eventId>`;
 * - 3 (current): as 2 with `#` and `%` of the eventId escaped, so no two events share an inbox key;
 *   provider key `<consumer>@<tenant hash>:<eventId>` for an event with a tenant.
 *
 * An event without a tenant whose eventId holds no `#` or `%` has the same keys in every shape.
 *
 * @example A ledger that writes the previous release's shape (step 1 of a rollback-safe upgrade)
 * ```ts
 * new DynamoDbLoyaltyLedger(documents, { ...wiring.ledgerOptions, keys: { write: 2 } });
 * ```
 */
export type KeyShape = 1 | 2 | 3;

/**
 * The shape this release writes unless a ledger is told otherwise.
 *
 * @example
 * ```ts
 * const pk = inboxPk('loyalty', event, CURRENT_KEY_SHAPE);
 * ```
 */
export const CURRENT_KEY_SHAPE: KeyShape = 3;

/**
 * Every shape this release knows, newest first: where a claim is looked for unless a ledger is told otherwise.
 *
 * @example Drop the legacy lookups once every claim of an older shape has expired
 * ```ts
 * new DynamoDbLoyaltyLedger(documents, { ...wiring.ledgerOptions, keys: { find: [CURRENT_KEY_SHAPE] } });
 * ```
 */
export const KNOWN_KEY_SHAPES: readonly KeyShape[] = [3, 2, 1];

/** What names an event for its keys: its id and, when its producer verified one, its tenant. */
type Keyed = Pick<EventEnvelope, 'eventId' | 'tenant'>;

/**
 * An eventId's `#` and `%` percent-escaped, everything else as sent: the inbox key's separator cannot
 * appear in it, so an eventId `a#b` without a tenant never meets tenant `a`'s eventId `b`, and an eventId
 * without either character keeps the key it always had (no migration for it).
 */
const escapeEventId = (eventId: string): string => eventId.replace(/[%#]/g, (c) => (c === '%' ? '%25' : '%23'));

/**
 * The partition key of a consumer's inbox entry for an event in one key shape (sort key `INBOX`). In
 * the current shape no two (tenant, eventId) pairs share one: the tenant is URI-encoded (no `#`), the
 * eventId escaped (no `#`), so the count of `#` after the consumer tells a tenant's key from a keyless one.
 *
 * @example
 * ```ts
 * inboxPk('loyalty', { eventId: 'ord-1.placed', tenant: 'arn:aws:iam::1:role/shop' }); // 'INBOX#loyalty#arn%3Aaws%3Aiam%3A%3A1%3Arole%2Fshop#ord-1.placed'
 * ```
 */
export function inboxPk(consumer: string, event: Keyed, shape: KeyShape = CURRENT_KEY_SHAPE): string {
  const { eventId, tenant } = event;
  if (shape === 1 || tenant === undefined) return `INBOX#${consumer}#${shape === 3 ? escapeEventId(eventId) : eventId}`;
  return `INBOX#${consumer}#${encodeURIComponent(tenant)}#${shape === 3 ? escapeEventId(eventId) : eventId}`;
}

/**
 * The tenant as it appears in a provider key and in a standard queue's message group: 22 base64url
 * characters of its SHA-256 (132 bits). Hashed, not encoded: a tenant is a caller's ARN, up to 2,048
 * characters with a role path and a session name, while a provider takes keys of at most 255 printable
 * ASCII characters (Stripe) and SQS a message group id of at most 128; a hash has a fixed length, no `:`
 * or `/`, and keeps a person's session name out of a third party's logs.
 *
 * @example
 * ```ts
 * tenantDigest('arn:aws:iam::123456789012:role/shop'); // 22 characters of [A-Za-z0-9_-]
 * ```
 */
export const tenantDigest = (tenant: string): string =>
  createHash('sha256').update(tenant).digest('base64url').slice(0, 22);

/**
 * The idempotency key a consumer gives its external provider for one event: `<consumer>:<eventId>`
 * for an event without a tenant (the key it always had), `<consumer>@<tenant hash>:<eventId>` for
 * one with a tenant, so two tenants' events under one eventId are two calls, never one key with two
 * payloads (which a key-honouring provider refuses, or answers with the first tenant's reply). A
 * consumer name holds no `@` or `:` and the hash no `:`, so no two events share a key. At most
 * 32 + 1 + 22 + 1 characters before the eventId: an eventId up to 199 characters fits a 255-character
 * provider. Only the ledger and the fallback of callProviderIfOwed call it: a use case sends under the
 * key callProviderIfOwed hands it (the one the event's claim recorded, which may be an older shape).
 *
 * @example The key a loyalty consumer's call carries
 * ```ts
 * import { providerKey } from '..';
 *
 * providerKey('loyalty', { eventId: 'ord-1.placed' }); // 'loyalty:ord-1.placed'
 * providerKey('loyalty', { eventId: 'ord-1.placed', tenant: 'arn:aws:iam::123456789012:role/shop' }); // 'loyalty@<22 chars>:ord-1.placed'
 * ```
 */
export function providerKey(consumer: string, event: Keyed, shape: KeyShape = CURRENT_KEY_SHAPE): string {
  if (shape !== 3 || event.tenant === undefined) return `${consumer}:${event.eventId}`;
  return `${consumer}@${tenantDigest(event.tenant)}:${event.eventId}`;
}
