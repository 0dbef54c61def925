import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoDbEntityEffectLedger } from '@exactly-once/runtime/aws/entity-effect-ledger';
import type { LedgerKeyOptions } from '@exactly-once/runtime/aws/inbox-claim-keys';
import { entityEffectKey, inboxKey } from '@exactly-once/runtime/aws/inbox-table';
import type { EventEnvelope } from '@exactly-once/runtime/envelope';
import { applyEntityEffect } from '@exactly-once/runtime/inbox/entity-effect';
import { inboxPk, providerKey } from '@exactly-once/runtime/inbox/keys';
import type { ExternalProvider } from '@exactly-once/runtime/provider/provider';
import { useEmulatedEffects } from '../support/emulated-effects';
import { stripeLikeProvider } from '../support/providers';

/**
 * Keys are a migration (inbox/keys.ts): during a stack update old and new functions run side by side,
 * and a rollback goes back. On DynamoDB Local, with ledgers configured as each release behaves
 * (`keys.write` its shape, `keys.find` the shapes it knows): a claim written under one release's key
 * shape is found by the other, in the claim's own transaction, and its provider call is owed under the
 * key its claim recorded.
 */

const CONSUMER = 'audit';
/** Two tenants, as callers' ARNs (full of `:` and `/`). */
const ALICE = 'arn:aws:iam::123456789012:user/alice';
const BOB = 'arn:aws:iam::123456789012:user/bob';
/** The releases, as ledger options: shape 1 (no tenant in the key), shape 2 (the tenant, no escaping), this one. */
const RELEASE_1: LedgerKeyOptions = { write: 1, find: [1] };
const RELEASE_2: LedgerKeyOptions = { write: 2, find: [2] };
const CURRENT: LedgerKeyOptions | undefined = undefined;
/** Step 1 of a rollback-safe upgrade: the previous release's shape written, every shape found. */
const TWO_STEP: LedgerKeyOptions = { write: 2 };

let documents: DynamoDBDocumentClient;
let effectsTable: string;
useEmulatedEffects((db) => ({ documents, effectsTable } = db));

const get = async (pk: string) =>
  (await documents.send(new GetCommand({ TableName: effectsTable, Key: { pk, sk: 'INBOX' }, ConsistentRead: true })))
    .Item;

const ledgerOf = (keys: LedgerKeyOptions | undefined) =>
  new DynamoDbEntityEffectLedger(documents, {
    consumer: CONSUMER,
    tableName: effectsTable,
    inboxTtlSeconds: 3600,
    keys,
  });

const event = (eventId: string, entityId: string, tenant?: string): EventEnvelope => ({
  eventId,
  type: 'ThingHappened',
  entityId,
  version: 1,
  occurredAt: new Date(Date.now() - 60_000).toISOString(),
  payload: {},
  ...(tenant === undefined ? {} : { tenant }),
});

const applyAs = (keys: LedgerKeyOptions | undefined, e: EventEnvelope, provider: ExternalProvider) =>
  applyEntityEffect(e, { consumer: CONSUMER, eventTypes: ['ThingHappened'], ledger: ledgerOf(keys), provider });

const count = async (entityId: string) =>
  (
    await documents.send(
      new GetCommand({ TableName: effectsTable, Key: entityEffectKey(CONSUMER, entityId), ConsistentRead: true }),
    )
  ).Item?.appliedCount;

describe('a claim of an older release, then this one', () => {
  test('claimed under the key without the tenant, its call done: this release finds it, one effect, no second call', async () => {
    const { provider, performed } = stripeLikeProvider();
    const e = event('evt-k1', 'entity-k1', ALICE);

    const outcomes = [await applyAs(RELEASE_1, e, provider), await applyAs(CURRENT, e, provider)];

    expect(outcomes).toEqual(['applied', 'duplicate']);
    expect(await count('entity-k1')).toBe(1);
    expect(performed.map((p) => p.key)).toEqual([`${CONSUMER}:evt-k1`]);
    expect(await get(inboxKey(CONSUMER, 'evt-k1', ALICE).pk)).toBeUndefined();
  });

  test('its call still owed: this release makes it under the key the old claim owes it under, once, and marks that entry done', async () => {
    const { provider, performed, state } = stripeLikeProvider();
    const e = event('evt-k2', 'entity-k2', ALICE);
    state.down = true;
    await expect(applyAs(RELEASE_1, e, provider)).rejects.toThrow('provider down');
    state.down = false;

    const outcomes = [await applyAs(CURRENT, e, provider), await applyAs(CURRENT, e, provider)];

    expect(outcomes).toEqual(['duplicate', 'duplicate']);
    expect(await count('entity-k2')).toBe(1);
    expect(performed.map((p) => p.key)).toEqual([`${CONSUMER}:evt-k2`]);
    expect(await get(inboxPk(CONSUMER, e, 1))).toMatchObject({ providerCallDoneAt: expect.any(String) });
    expect(await get(inboxKey(CONSUMER, 'evt-k2', ALICE).pk)).toBeUndefined();
  });

  test('an eventId with `#`, claimed under the unescaped key of release 2: found, one effect', async () => {
    const { provider, performed } = stripeLikeProvider();
    const e = event('evt#k3', 'entity-k3', ALICE);

    const outcomes = [await applyAs(RELEASE_2, e, provider), await applyAs(CURRENT, e, provider)];

    expect(outcomes).toEqual(['applied', 'duplicate']);
    expect(await count('entity-k3')).toBe(1);
    expect(performed).toHaveLength(1);
  });

  test("another tenant's event under the id, at the old key without the tenant, is not this event's claim: both applied", async () => {
    const { provider, performed } = stripeLikeProvider();
    const [ofBob, ofAlice] = [event('evt-k4', 'entity-k4b', BOB), event('evt-k4', 'entity-k4a', ALICE)];
    // What this release writes for an event without a tenant sits where release 1 put every claim.
    await applyAs(CURRENT, event('evt-k4', 'entity-k4n'), provider);

    const outcomes = [await applyAs(CURRENT, ofAlice, provider), await applyAs(CURRENT, ofBob, provider)];

    expect(outcomes).toEqual(['applied', 'applied']);
    expect([await count('entity-k4a'), await count('entity-k4b')]).toEqual([1, 1]);
    expect(new Set(performed.map((p) => p.key)).size).toBe(3);
  });
});

describe('a claim of this release, then an older one (a deploy window, or a rollback)', () => {
  test('release 2 finds the claim (same key for an eventId without `#`): one effect, no second call', async () => {
    const { provider, performed } = stripeLikeProvider();
    const e = event('evt-k5', 'entity-k5', ALICE);

    const outcomes = [await applyAs(CURRENT, e, provider), await applyAs(RELEASE_2, e, provider)];

    expect(outcomes).toEqual(['applied', 'duplicate']);
    expect(await count('entity-k5')).toBe(1);
    expect(performed.map((p) => p.key)).toEqual([providerKey(CONSUMER, e)]);
  });

  test('written by step 1 of a two-step upgrade, its call owed: release 2 makes it under the same key, once', async () => {
    const { provider, performed, state } = stripeLikeProvider();
    const e = event('evt-k6', 'entity-k6', ALICE);
    state.down = true;
    await expect(applyAs(TWO_STEP, e, provider)).rejects.toThrow('provider down');
    state.down = false;

    const outcomes = [await applyAs(RELEASE_2, e, provider), await applyAs(TWO_STEP, e, provider)];

    expect(outcomes).toEqual(['duplicate', 'duplicate']);
    expect(await count('entity-k6')).toBe(1);
    expect(performed.map((p) => p.key)).toEqual([`${CONSUMER}:evt-k6`]);
  });
});

describe('the inbox key is injective', () => {
  test("an eventId `a#b` without a tenant and tenant `a`'s eventId `b` are two events: both applied", async () => {
    const { provider } = stripeLikeProvider();
    const [keyless, tenants] = [event('k8a#k8b', 'entity-k8x'), event('k8b', 'entity-k8y', 'k8a')];

    const outcomes = [await applyAs(CURRENT, keyless, provider), await applyAs(CURRENT, tenants, provider)];

    expect(outcomes).toEqual(['applied', 'applied']);
    expect([await count('entity-k8x'), await count('entity-k8y')]).toEqual([1, 1]);
    expect(inboxPk(CONSUMER, keyless)).not.toBe(inboxPk(CONSUMER, tenants));
  });
});

test('a claim of an older release recorded no provider key: its duplicate owes the call under `<consumer>:<eventId>`', async () => {
  const { provider, performed } = stripeLikeProvider();
  const e = event('evt-k10', 'entity-k10', ALICE);
  // A claim as release 2 wrote it, by hand: no providerKey attribute, call not done.
  await documents.send(
    new PutCommand({
      TableName: effectsTable,
      Item: {
        pk: inboxPk(CONSUMER, e, 2),
        sk: 'INBOX',
        consumer: CONSUMER,
        eventId: e.eventId,
        tenant: ALICE,
        claimedAt: new Date().toISOString(),
      },
    }),
  );

  const outcome = await applyAs(CURRENT, e, provider);

  expect(outcome).toBe('duplicate');
  expect(performed.map((p) => p.key)).toEqual([`${CONSUMER}:evt-k10`]);
});
