import type { EventEnvelope } from '../envelope';
import type { EventRef } from '../inbox/ports';
import { CURRENT_KEY_SHAPE, inboxPk, KNOWN_KEY_SHAPES, providerKey, type KeyShape } from '../inbox/keys';
import {
  FINGERPRINT_ATTRIBUTE,
  PROVIDER_KEY_ATTRIBUTE,
  SUPERSEDED_BY_ATTRIBUTE,
  SUPERSEDED_BY_ENTITY_ATTRIBUTE,
  SUPERSEDED_BY_VERSION_ATTRIBUTE,
} from './inbox-table';

/**
 * Which key shapes a ledger writes and finds claims under (inbox/keys.ts). A key that changes shape is
 * a migration: during a stack update old and new functions run side by side, and a rollback goes back,
 * so a claim written by one release must be found by the other. Each shape in `find` that gives an
 * event another key than `write` costs one ConditionCheck in the claim's transaction (billed as a
 * transactional write of the item it checks: 2 write units for an absent or small entry).
 *
 * @example Step 1 of a rollback-safe upgrade: write the previous release's shape, find every shape
 * ```ts
 * const ledger = new DynamoDbLoyaltyLedger(wiring.documents, { ...wiring.ledgerOptions, keys: { write: 2 } });
 * ```
 */
export interface LedgerKeyOptions {
  /**
   * The shape new claims (and their provider keys) are written under.
   * @default CURRENT_KEY_SHAPE (3)
   */
  write?: KeyShape;
  /**
   * The shapes a claim is looked for under, in the claim's own transaction. Every claim of a shape no
   * running release writes is gone once the inbox TTL (counted from the later of its claim and its
   * event's occurredAt) has passed since the last such release stopped: then `[CURRENT_KEY_SHAPE]`
   * saves the ConditionChecks. `[write]` alone makes the ledger behave as a release that knew only its
   * own shape (the simulation's previous release).
   * @default KNOWN_KEY_SHAPES (3, 2, 1)
   */
  find?: readonly KeyShape[];
}

/** An inbox entry's key. */
export type InboxEntryKey = { pk: string; sk: string };

/** An event's keys under a ledger's shapes: where its claim is written, where else it may live, its provider key. */
export interface ClaimKeys {
  written: InboxEntryKey;
  /** The other places an earlier (or later) release may have claimed the event, each checked in the claim's transaction. */
  elsewhere: InboxEntryKey[];
  /** The provider key the call is owed under when this ledger writes the claim. */
  providerKey: string;
}

/**
 * The keys of `event`'s inbox entry for `consumer` under `options`: the written shape's, and those of the
 * other shapes found that differ from it (one key may serve several shapes: an event without a tenant
 * and without `#` or `%` in its id has one key in all of them).
 *
 * @example
 * ```ts
 * const { written, elsewhere, providerKey } = claimKeys('loyalty', event, this.options.keys);
 * ```
 */
export function claimKeys(consumer: string, event: EventRef, options: LedgerKeyOptions | undefined): ClaimKeys {
  const write = options?.write ?? CURRENT_KEY_SHAPE;
  const written = inboxPk(consumer, event, write);
  const elsewhere = [...new Set((options?.find ?? KNOWN_KEY_SHAPES).map((shape) => inboxPk(consumer, event, shape)))]
    .filter((pk) => pk !== written)
    .map((pk) => ({ pk, sk: 'INBOX' }));
  return { written: { pk: written, sk: 'INBOX' }, elsewhere, providerKey: providerKey(consumer, event, write) };
}

/**
 * The ConditionCheck that finds a claim under another key shape in the claim's own transaction: it fails
 * (and cancels the effect with it) when an entry is there, and returns that entry, read like a failed claim.
 *
 * @example
 * ```ts
 * const items = [claim, ...elsewhere.map((key) => claimedElsewhere(this.options.tableName, key)), ...effect];
 * ```
 */
export const claimedElsewhere = (tableName: string, Key: InboxEntryKey) => ({
  ConditionCheck: {
    TableName: tableName,
    Key,
    ConditionExpression: 'attribute_not_exists(pk)',
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
  },
});

/**
 * Whether an entry found under another shape's key belongs to another event, so it is no claim of this
 * one: a shape-1 key has no tenant, so tenant A's event and tenant B's (or a tenantless event's) under one
 * id meet there. Only an entry a tenant-aware release wrote (with a fingerprint or a supersede binding)
 * says whose it is; an older one is taken as this event's, as its own release took it.
 *
 * @example
 * ```ts
 * if (at !== written && belongsToAnotherTenant(entry, event)) return this.transactWith(event, effect, work, without(at));
 * ```
 */
export function belongsToAnotherTenant(entry: Record<string, unknown>, event: EventRef): boolean {
  const tenantAware = entry[FINGERPRINT_ATTRIBUTE] !== undefined || entry[SUPERSEDED_BY_ENTITY_ATTRIBUTE] !== undefined;
  return tenantAware && entry.tenant !== event.tenant;
}

/**
 * The provider key a duplicate's owed call is sent under: the one its claim recorded, or, for a claim of
 * a release that recorded none, that release's key `<consumer>:<eventId>` (shapes 1 and 2).
 *
 * @example
 * ```ts
 * const claim = { inboxPk: at.pk, providerKey: owedProviderKey(this.consumer, event, entry) };
 * ```
 */
export function owedProviderKey(consumer: string, event: EventRef, entry: Record<string, unknown>): string {
  const stored = entry[PROVIDER_KEY_ATTRIBUTE];
  return typeof stored === 'string' ? stored : providerKey(consumer, event, 1);
}

/**
 * What a failed claim on an entry a supersede mark created (no claim of its own: no `claimedAt`) means:
 * the mark names the superseding event's entity and version, so an event of that entity at or below that
 * version is `stale` (the superseded event itself, redelivered), and any other is `reused`: another
 * event under an id the mark took, which must not be taken for a duplicate. `undefined` when the entry
 * is a claim, or a mark written before marks were bound (taken as a duplicate, as it always was).
 *
 * @example
 * ```ts
 * const verdict = supersedeMarkVerdict(event, entry); // 'stale' | 'reused' | undefined
 * ```
 */
export function supersedeMarkVerdict(
  event: Pick<EventEnvelope, 'entityId' | 'version'>,
  entry: Record<string, unknown>,
): 'stale' | 'reused' | undefined {
  if (entry.claimedAt !== undefined || entry[SUPERSEDED_BY_ATTRIBUTE] === undefined) return undefined;
  const entityId = entry[SUPERSEDED_BY_ENTITY_ATTRIBUTE];
  const version = entry[SUPERSEDED_BY_VERSION_ATTRIBUTE];
  if (entityId === undefined || typeof version !== 'number') return undefined;
  return entityId === event.entityId && event.version <= version ? 'stale' : 'reused';
}
