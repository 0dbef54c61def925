import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { sequencedEntityKey } from '@exactly-once/runtime/aws';
import { ledgerOf } from '@exactly-once/runtime/consumer-spec';
import { recordFindingOnLedger } from '@exactly-once/tools/dlq/provider-window';
import { DynamoDbFulfilmentLedger, InboxFulfilmentLedger } from '../../lambdas/shop/aws/ledgers';
import { consumerSpec } from '../../lambdas/shop/consumers';
import type { OrderEvent } from '../../lambdas/shop/domain/events';
import { fulfilOrderEvent } from '../../lambdas/shop/use-cases/apply-order-events';
import { useEmulatedEffects } from '../support/emulated-effects';
import { stripeLikeProvider } from '../support/providers';
import { ALICE, cancelledEvent, placedEvent } from '../support/orders';

/**
 * The shop's fulfilment on the sequenced ledger, on DynamoDB Local: its claims live on the order's entity
 * item, its cancel supersedes the PICK its place still owes (no PICK after CANCEL_PICK), and a person's
 * finding about a PICK owed past the warehouse's key window, written by the DLQ tool where the spec's
 * ledger says, is what the redriven OrderPlaced obeys.
 */

let documents: DynamoDBDocumentClient;
let raw: DynamoDBClient;
let effectsTable: string;
useEmulatedEffects((db) => ({ documents, raw, effectsTable } = db));

const fulfilment = (now?: () => Date) =>
  new DynamoDbFulfilmentLedger(documents, {
    consumer: 'fulfilment',
    tableName: effectsTable,
    inboxTtlSeconds: 3600,
    now,
  });

const orderItem = async (orderId: string) =>
  (
    await documents.send(
      new GetCommand({
        TableName: effectsTable,
        Key: sequencedEntityKey('fulfilment', { entityId: orderId, tenant: ALICE }),
        ConsistentRead: true,
      }),
    )
  ).Item;

/** Every item of the table whose key names the order: its claims are on its entity item, nowhere else. */
const itemsNaming = async (orderId: string) =>
  ((await documents.send(new ScanCommand({ TableName: effectsTable }))).Items ?? []).filter((i) =>
    String(i.pk).includes(orderId),
  );

const eventsOf = (orderId: string): [OrderEvent, OrderEvent] => [
  { ...placedEvent(orderId), tenant: ALICE },
  { ...cancelledEvent(orderId), tenant: ALICE },
];

test('an OrderPlaced delivered twice: one reservation, one PICK, one item holding the claim and the state, no inbox entry', async () => {
  const { provider: warehouse, performed } = stripeLikeProvider();
  const [placed] = eventsOf('ord-sq-1');

  const outcomes = [
    await fulfilOrderEvent(placed, { ledger: fulfilment(), warehouse }),
    await fulfilOrderEvent(placed, { ledger: fulfilment(), warehouse }),
  ];

  expect(outcomes).toEqual(['applied', 'duplicate']);
  expect(performed.map((p) => p.body.instruction)).toEqual(['PICK']);
  expect(await itemsNaming('ord-sq-1')).toEqual([
    expect.objectContaining({ state: 'RESERVED', seq: 1, seqEventId: placed.eventId, seqClaims: 1 }),
  ]);
});

test('an OrderPlaced with its PICK owed, cancelled, then redriven: CANCEL_PICK and never a PICK after it', async () => {
  const { provider: warehouse, performed, state } = stripeLikeProvider();
  const [placed, cancelled] = eventsOf('ord-sq-2');
  state.down = true;
  await expect(fulfilOrderEvent(placed, { ledger: fulfilment(), warehouse })).rejects.toThrow('provider down');
  state.down = false;

  const outcomes = [
    await fulfilOrderEvent(cancelled, { ledger: fulfilment(), warehouse }),
    await fulfilOrderEvent(placed, { ledger: fulfilment(), warehouse }),
  ];

  expect(outcomes).toEqual(['applied', 'stale']);
  expect(performed.map((p) => p.body.instruction)).toEqual(['CANCEL_PICK']);
  const item = await orderItem('ord-sq-2');
  expect(item).toMatchObject({ state: 'RELEASED', seq: 2, seqEventId: cancelled.eventId });
  expect(item).not.toHaveProperty('owedCall');
});

describe("a PICK owed past the warehouse's key window, settled by the DLQ tool on fulfilment's entity item", () => {
  const claimedAt = Date.now();
  const aDayLater = () => new Date(claimedAt + 86_400_000);

  /** The PICK failed at its claim and its redelivery a day later was refused: what dead-letters it. */
  async function owedPastTheWindow(orderId: string) {
    const { provider: warehouse, performed, state } = stripeLikeProvider();
    const [placed] = eventsOf(orderId);
    state.down = true;
    await expect(
      fulfilOrderEvent(placed, { ledger: fulfilment(() => new Date(claimedAt)), warehouse }),
    ).rejects.toThrow('provider down');
    state.down = false;
    const redeliver = () => fulfilOrderEvent(placed, { ledger: fulfilment(aDayLater), warehouse });
    await expect(redeliver()).rejects.toMatchObject({ permanentCause: 'ProviderKeyWindowPassed' });
    const where = {
      table: effectsTable,
      consumer: 'fulfilment',
      ledger: ledgerOf(consumerSpec('fulfilment')),
      eventId: placed.eventId,
      tenant: ALICE,
      entityId: orderId,
    };
    return { performed, redeliver, where };
  }

  test('found performed: the redriven OrderPlaced sends no PICK', async () => {
    const { performed, redeliver, where } = await owedPastTheWindow('ord-sq-3');
    await recordFindingOnLedger(raw, where, 'performed', aDayLater());

    const outcome = await redeliver();

    expect(outcome).toBe('duplicate');
    expect(performed).toEqual([]);
    expect(await orderItem('ord-sq-3')).not.toHaveProperty('owedCall');
  });

  test('found NOT performed: the redriven OrderPlaced sends its PICK once', async () => {
    const { performed, redeliver, where } = await owedPastTheWindow('ord-sq-4');
    await recordFindingOnLedger(raw, where, 'not-performed', aDayLater());

    const outcomes = [await redeliver(), await redeliver()];

    expect(outcomes).toEqual(['duplicate', 'duplicate']);
    expect(performed.map((p) => p.body.instruction)).toEqual(['PICK']);
    expect(await orderItem('ord-sq-4')).toMatchObject({ state: 'RESERVED', seqClaims: 1 });
  });

  test('a finding for an OrderPlaced its cancel superseded is refused, and the item stays as it was', async () => {
    const { where } = await owedPastTheWindow('ord-sq-5');
    const { provider: warehouse } = stripeLikeProvider();
    await fulfilOrderEvent(eventsOf('ord-sq-5')[1], { ledger: fulfilment(aDayLater), warehouse });
    const before = await orderItem('ord-sq-5');

    const recorded = recordFindingOnLedger(raw, where, 'not-performed', aDayLater());

    await expect(recorded).rejects.toThrow(
      `fulfilment ${where.eventId}: its entity item ord-sq-5 owes no call for it (already done, or superseded): nothing recorded`,
    );
    expect(await orderItem('ord-sq-5')).toEqual(before);
  });
});

describe('an order the inbox ledger began, before the upgrade', () => {
  /** The release before: fulfilment on the transactional inbox alone, with its key shapes as deployed. */
  const inboxLedger = () =>
    new InboxFulfilmentLedger(documents, {
      consumer: 'fulfilment',
      tableName: effectsTable,
      inboxTtlSeconds: 3600,
      ledger: 'inbox',
    });
  const reserved = async (sku: string) =>
    (
      await documents.send(
        new GetCommand({ TableName: effectsTable, Key: { pk: `SKU#${sku}`, sk: 'INVENTORY' }, ConsistentRead: true }),
      )
    ).Item?.reserved;

  test('its PICK owed at the deploy, cancelled after it (the cancel delivered twice), then its OrderPlaced redriven: stock released once, CANCEL_PICK and never a PICK after it, nothing on the sequenced item', async () => {
    const { provider: warehouse, performed, state } = stripeLikeProvider();
    // Its own SKU: the other tests' orders reserve SKU-A in the same table.
    const lines = [{ sku: 'SKU-LEGACY-1', quantity: 2, unitPriceCents: 500 }];
    const placed = { ...placedEvent('ord-sq-legacy-1', lines), tenant: ALICE };
    const cancelled = { ...cancelledEvent('ord-sq-legacy-1', lines), tenant: ALICE };
    state.down = true;
    await expect(fulfilOrderEvent(placed, { ledger: inboxLedger(), warehouse })).rejects.toThrow('provider down');
    state.down = false;

    const outcomes = [
      await fulfilOrderEvent(cancelled, { ledger: fulfilment(), warehouse }),
      await fulfilOrderEvent(cancelled, { ledger: fulfilment(), warehouse }),
      await fulfilOrderEvent(placed, { ledger: fulfilment(), warehouse }),
    ];

    expect(outcomes).toEqual(['applied', 'duplicate', 'duplicate']);
    expect(await reserved('SKU-LEGACY-1')).toBe(0);
    expect(performed.map((p) => p.body.instruction)).toEqual(['CANCEL_PICK']);
    expect(await orderItem('ord-sq-legacy-1')).toBeUndefined();
  });
});
