import { PROVIDER_CALL_DONE_ATTRIBUTE } from '@exactly-once/runtime/aws/inbox-table';
import { sequencedEntityKey } from '@exactly-once/runtime/aws/sequenced-ledger';
import { MemoryDynamoDb } from '@exactly-once/tools/simulation/memory-dynamodb';
import { DynamoDbFulfilmentLedger, InboxFulfilmentLedger, type LegacyFulfilment } from '../../lambdas/shop/aws/ledgers';
import type { OrderEvent } from '../../lambdas/shop/domain/events';
import { legacyFulfilmentFromEnv } from '../../lambdas/shop/entry-points/fulfilment-consumer';
import { fulfilOrderEvent } from '../../lambdas/shop/use-cases/apply-order-events';
import { ALICE, cancelledEvent, placedEvent } from '../support/orders';
import { stripeLikeProvider } from '../support/providers';

/**
 * Fulfilment across the deploy that moves it from the transactional inbox to the sequenced ledger, on the
 * in-memory DynamoDB (held to DynamoDB Local by contract suites): orders the inbox ledger began (their
 * `FULFILMENT#<orderId>` item and inbox entries, as the release before wrote them) finish on it under
 * this release's default (`'read'`), every event delivered twice; a new order touches none of that; and
 * the rollback-safe first step (`'write'`) does the same the other way round.
 */

const TABLE = 'effects';
const db = new MemoryDynamoDb();
db.createTable(TABLE, { hash: 'pk', range: 'sk' });
const documents = db.asDocumentClient();
const OPTIONS = { consumer: 'fulfilment', tableName: TABLE, inboxTtlSeconds: 3600 };
let orders = 0;

/** A fresh order with its own SKU, the warehouse, and fulfilment before and after the deploy. */
function anOrder() {
  orders += 1;
  const orderId = `ord-t${orders}`;
  const lines = [{ sku: `SKU-T${orders}`, quantity: 2, unitPriceCents: 500 }];
  const { provider: warehouse, performed, state } = stripeLikeProvider();
  // The release before: fulfilment on the inbox ledger alone.
  const before = new InboxFulfilmentLedger(documents, { ...OPTIONS, ledger: 'inbox' });
  const after = (mode?: LegacyFulfilment) =>
    new DynamoDbFulfilmentLedger(documents, { ...OPTIONS, ledger: 'sequenced' }, mode);
  const fulfil = (ledger: InboxFulfilmentLedger | DynamoDbFulfilmentLedger, event: OrderEvent) =>
    fulfilOrderEvent(event, { ledger, warehouse });
  const items = (prefix: string) =>
    db.storedItems(TABLE).filter((i) => String(i.pk).startsWith(prefix) && String(i.pk).includes(orderId));
  return {
    orderId,
    placed: { ...placedEvent(orderId, lines), tenant: ALICE },
    cancelled: { ...cancelledEvent(orderId, lines), tenant: ALICE },
    state,
    before,
    after,
    fulfil,
    reserved: () => db.storedItems(TABLE).find((i) => i.pk === `SKU#${lines[0].sku}`)?.reserved as number | undefined,
    instructions: () => performed.map((p) => String(p.body.instruction)),
    legacyItems: () => [...items('FULFILMENT#'), ...items('INBOX#fulfilment#')],
    sequencedItem: () =>
      db
        .storedItems(TABLE)
        .find((i) => i.pk === sequencedEntityKey('fulfilment', { entityId: orderId, tenant: ALICE }).pk),
  };
}

describe("orders the inbox ledger began finish on it after the deploy ('read')", () => {
  test('a reserved order whose OrderPlaced is delivered again, twice, after the switch reserves nothing more and picks once', async () => {
    const o = anOrder();
    await o.fulfil(o.before, o.placed);

    const outcomes = [await o.fulfil(o.after(), o.placed), await o.fulfil(o.after(), o.placed)];

    expect(outcomes).toEqual(['duplicate', 'duplicate']);
    expect(o.reserved()).toBe(2);
    expect(o.instructions()).toEqual(['PICK']);
    expect(o.sequencedItem()).toBeUndefined();
  });

  test('a reserved order whose PICK was owed at the deploy: its OrderPlaced, delivered twice after the switch, sends the PICK once, leased and marked done on its inbox entry', async () => {
    const o = anOrder();
    o.state.down = true;
    await expect(o.fulfil(o.before, o.placed)).rejects.toThrow();
    o.state.down = false;

    const outcomes = [await o.fulfil(o.after(), o.placed), await o.fulfil(o.after(), o.placed)];

    expect(outcomes).toEqual(['duplicate', 'duplicate']);
    expect(o.reserved()).toBe(2);
    expect(o.instructions()).toEqual(['PICK']);
    expect(o.legacyItems().find((i) => String(i.pk).startsWith('INBOX#'))).toHaveProperty(PROVIDER_CALL_DONE_ATTRIBUTE);
  });

  test('a reserved order cancelled after the switch, the cancel delivered twice, releases its stock once; its OrderPlaced redriven later sends no PICK after the CANCEL_PICK', async () => {
    const o = anOrder();
    o.state.down = true; // the PICK is still owed at the deploy
    await expect(o.fulfil(o.before, o.placed)).rejects.toThrow();
    o.state.down = false;

    const outcomes = [
      await o.fulfil(o.after(), o.cancelled),
      await o.fulfil(o.after(), o.cancelled),
      await o.fulfil(o.after(), o.placed),
    ];

    expect(outcomes).toEqual(['applied', 'duplicate', 'duplicate']);
    expect(o.reserved()).toBe(0);
    expect(o.instructions()).toEqual(['CANCEL_PICK']);
    expect(o.sequencedItem()).toBeUndefined();
  });

  test('an order cancelled before its place under the inbox ledger stays stale for a late OrderPlaced, delivered twice after the switch: nothing reserved, no PICK', async () => {
    const o = anOrder();
    await o.fulfil(o.before, o.cancelled);

    const outcomes = [await o.fulfil(o.after(), o.placed), await o.fulfil(o.after(), o.placed)];

    expect(outcomes).toEqual(['stale', 'stale']);
    expect(o.reserved() ?? 0).toBe(0);
    expect(o.instructions()).toEqual(['CANCEL_PICK']);
    expect(o.sequencedItem()).toBeUndefined();
  });

  test('a new order, each event delivered twice, never touches the inbox ledger: no FULFILMENT# item, no inbox entry', async () => {
    const o = anOrder();

    for (const event of [o.placed, o.placed, o.cancelled, o.cancelled]) await o.fulfil(o.after(), event);

    expect(o.reserved()).toBe(0);
    expect(o.instructions()).toEqual(['PICK', 'CANCEL_PICK']);
    expect(o.legacyItems()).toEqual([]);
    expect(o.sequencedItem()).toMatchObject({ state: 'RELEASED', seq: 2, seqClaims: 2 });
  });
});

describe("the rollback-safe first step ('write')", () => {
  test('a new order goes on the inbox ledger, which the release before reads: its cancel there, delivered twice, releases once', async () => {
    const o = anOrder();
    await o.fulfil(o.after('write'), o.placed);

    const outcomes = [await o.fulfil(o.before, o.cancelled), await o.fulfil(o.before, o.cancelled)];

    expect(outcomes).toEqual(['applied', 'duplicate']);
    expect(o.reserved()).toBe(0);
    expect(o.instructions()).toEqual(['PICK', 'CANCEL_PICK']);
    expect(o.sequencedItem()).toBeUndefined();
  });

  test('an order the sequenced ledger began finishes on it: its cancel, delivered twice, releases once and its place stays applied once', async () => {
    const o = anOrder();
    await o.fulfil(o.after('read'), o.placed);

    const outcomes = [
      await o.fulfil(o.after('write'), o.cancelled),
      await o.fulfil(o.after('write'), o.cancelled),
      await o.fulfil(o.after('write'), o.placed),
    ];

    expect(outcomes).toEqual(['applied', 'duplicate', 'stale']);
    expect(o.reserved()).toBe(0);
    expect(o.instructions()).toEqual(['PICK', 'CANCEL_PICK']);
    expect(o.legacyItems()).toEqual([]);
  });
});

describe('FULFILMENT_LEGACY_LEDGER', () => {
  const withEnv = (value: string | undefined) => {
    const saved = process.env.FULFILMENT_LEGACY_LEDGER;
    if (value === undefined) delete process.env.FULFILMENT_LEGACY_LEDGER;
    else process.env.FULFILMENT_LEGACY_LEDGER = value;
    try {
      return legacyFulfilmentFromEnv();
    } finally {
      if (saved === undefined) delete process.env.FULFILMENT_LEGACY_LEDGER;
      else process.env.FULFILMENT_LEGACY_LEDGER = saved;
    }
  };

  test.each([
    [undefined, 'read'],
    ['off', 'off'],
    ['write', 'write'],
  ])('%s reads as %s', (value, mode) => {
    expect(withEnv(value)).toBe(mode);
  });

  test('any other value fails the cold start, naming the variable, so a typo cannot switch the read off', () => {
    expect(() => withEnv('of')).toThrow("FULFILMENT_LEGACY_LEDGER must be 'read', 'off' or 'write', not 'of'");
  });
});
