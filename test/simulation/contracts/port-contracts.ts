import { GetCommand, TransactWriteCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDbTryCounter } from '../../../lambdas/exactly-once/aws/dynamodb-try-counter';
import { INBOX_TTL_ATTRIBUTE, inboxKey } from '../../../lambdas/exactly-once/aws/inbox-table';
import { withoutInbox } from '../../../lambdas/exactly-once/faults/inbox-bypass';
import {
  DynamoDbEffectsReader,
  DynamoDbFulfilmentLedger,
  DynamoDbLoyaltyLedger,
} from '../../../lambdas/shop/aws/ledgers';
import { DynamoDbOrderRepository } from '../../../lambdas/shop/aws/dynamodb-order-repository';
import { DynamoDbOutboxStore } from '../../../lambdas/exactly-once/aws/dynamodb-outbox-store';
import { orderCancelledEvent, orderPlacedEvent, type OrderEvent } from '../../../lambdas/shop/domain/events';
import type { StoredOrder } from '../../../lambdas/shop/ports/order-repository';
import { ORDER_PK_PREFIX } from '../../../lambdas/shop/aws/order-table';
import { OUTBOX_TTL_ATTRIBUTE } from '../../../lambdas/exactly-once/aws/outbox-table';

/**
 * Port contract suites. Each runs the real adapters against a table store
 * given by the caller: the simulation's in-memory DynamoDB (unit project) and
 * DynamoDB Local (integration project, tables created from the synthesized
 * template). Whatever the simulation relies on is pinned here, so the
 * in-memory store cannot behave differently from DynamoDB unnoticed.
 */
export interface TableStore {
  documents: DynamoDBDocumentClient;
  tables: { orders: string; effects: string };
  drop?: () => Promise<void>;
}

let sequence = 0;
function uniqueOrder(): StoredOrder {
  sequence += 1;
  const tag = `${process.pid}-${Date.now()}-${sequence}`;
  return {
    orderId: `ord_${tag}`,
    status: 'PLACED',
    customerId: `cust-${tag}`,
    items: [
      { sku: `sku-a-${tag}`, quantity: 3, unitPriceCents: 250 },
      { sku: `sku-b-${tag}`, quantity: 1, unitPriceCents: 1_000 },
    ],
    totalCents: 1_750,
    createdAt: '2026-01-01T00:00:00.000Z',
    caller: 'caller-1',
    fingerprint: `fp-${tag}`,
  };
}

export function describeLedgerContract(name: string, makeStore: () => Promise<TableStore>): void {
  describe(`ledger contract: ${name}`, () => {
    let store: TableStore;
    let inboxDisabled = false;
    const ledgers = () => {
      const options = { tableName: store.tables.effects, inboxTtlSeconds: 86_400 };
      // The inbox switch of the local runtime's build acts on the client, below the ledger.
      const documents = (consumer: string) => withoutInbox(store.documents, consumer, () => inboxDisabled);
      return {
        fulfilment: new DynamoDbFulfilmentLedger(documents('fulfilment'), { ...options, consumer: 'fulfilment' }),
        loyalty: new DynamoDbLoyaltyLedger(documents('loyalty'), { ...options, consumer: 'loyalty' }),
        reader: new DynamoDbEffectsReader(store.documents, store.tables.effects),
      };
    };
    const inboxEntry = async (consumer: string, { eventId, tenant }: { eventId: string; tenant?: string }) =>
      (
        await store.documents.send(
          new GetCommand({
            TableName: store.tables.effects,
            Key: inboxKey(consumer, eventId, tenant),
            ConsistentRead: true,
          }),
        )
      ).Item;
    beforeAll(async () => {
      store = await makeStore();
    });
    afterAll(() => store.drop?.());
    afterEach(() => {
      inboxDisabled = false;
    });

    test('reserve applies once; the same event again is a duplicate and reserves nothing more', async () => {
      const { fulfilment, reader } = ledgers();
      const placed = orderPlacedEvent(uniqueOrder(), '2026-01-01T00:00:00.000Z');

      const outcomes = [await fulfilment.reserve(placed), await fulfilment.reserve(placed)];

      expect(outcomes.map((r) => r.outcome)).toEqual(['applied', 'duplicate']);
      expect(await reader.reservedStock(placed.payload.items[0].sku)).toBe(3);
      expect(await reader.reservedStock(placed.payload.items[1].sku)).toBe(1);
    });

    test('release after reserve gives the stock back once; a duplicate release changes nothing', async () => {
      const { fulfilment, reader } = ledgers();
      const order = uniqueOrder();
      await fulfilment.reserve(orderPlacedEvent(order, order.createdAt));
      const cancelled = orderCancelledEvent(order, '2026-01-01T00:01:00.000Z');

      const outcomes = [await fulfilment.release(cancelled), await fulfilment.release(cancelled)];

      expect(outcomes.map((r) => r.outcome)).toEqual(['applied', 'duplicate']);
      expect(await reader.reservedStock(order.items[0].sku)).toBe(0);
    });

    test('a cancel that overtakes its place is recorded, and the late place is stale: nothing reserved', async () => {
      const { fulfilment, reader } = ledgers();
      const order = uniqueOrder();

      const release = await fulfilment.release(orderCancelledEvent(order, order.createdAt));
      const reserve = await fulfilment.reserve(orderPlacedEvent(order, order.createdAt));

      expect([release.outcome, reserve.outcome]).toEqual(['applied', 'stale']);
      expect(await reader.reservedStock(order.items[0].sku)).toBeUndefined();
    });

    test('a release of an already released order under a new event id is stale (version check), not a second release', async () => {
      const { fulfilment, reader } = ledgers();
      const order = uniqueOrder();
      await fulfilment.reserve(orderPlacedEvent(order, order.createdAt));
      const cancelled = orderCancelledEvent(order, order.createdAt);
      await fulfilment.release(cancelled);

      const again = await fulfilment.release({ ...cancelled, eventId: `${cancelled.eventId}.resent` });

      expect(again.outcome).toBe('stale');
      expect(await reader.reservedStock(order.items[0].sku)).toBe(0);
    });

    test('credit applies once per event id; a duplicate credits nothing', async () => {
      const { loyalty, reader } = ledgers();
      const first = orderPlacedEvent(uniqueOrder(), '2026-01-01T00:00:00.000Z');
      const second = orderPlacedEvent(
        { ...uniqueOrder(), customerId: first.payload.customerId },
        '2026-01-01T00:00:00.000Z',
      );

      const outcomes = [
        await loyalty.credit(first, 17),
        await loyalty.credit(first, 17),
        await loyalty.credit(second, 5),
      ];

      expect(outcomes.map((r) => r.outcome)).toEqual(['applied', 'duplicate', 'applied']);
      expect(await reader.customerPoints('caller-1', first.payload.customerId)).toBe(22);
    });

    test('a transaction sent again with its ClientRequestToken after it committed succeeds and writes nothing more; the token with other items is refused', async () => {
      const key = { pk: `TOKEN#${process.pid}-${Date.now()}`, sk: 'TOKEN' };
      const add = (amount: number) => ({
        Update: {
          TableName: store.tables.effects,
          Key: key,
          UpdateExpression: 'ADD #n :n',
          ExpressionAttributeNames: { '#n': 'n' },
          ExpressionAttributeValues: { ':n': amount },
        },
      });
      const token = `token-${process.pid}-${Date.now()}`;

      await store.documents.send(new TransactWriteCommand({ TransactItems: [add(1)], ClientRequestToken: token }));
      await store.documents.send(new TransactWriteCommand({ TransactItems: [add(1)], ClientRequestToken: token }));
      const mismatch = store.documents.send(
        new TransactWriteCommand({ TransactItems: [add(2)], ClientRequestToken: token }),
      );

      await expect(mismatch).rejects.toMatchObject({ name: 'IdempotentParameterMismatchException' });
      const stored = await store.documents.send(
        new GetCommand({ TableName: store.tables.effects, Key: key, ConsistentRead: true }),
      );
      expect(stored.Item?.n).toBe(1);
    });

    test('a duplicate owes the provider its call until the call is recorded done, read from the failed claim (ALL_OLD)', async () => {
      const { loyalty } = ledgers();
      const placed = orderPlacedEvent(uniqueOrder(), '2026-01-01T00:00:00.000Z');
      const first = await loyalty.credit(placed, 17);

      const beforeDone = await loyalty.credit(placed, 17);
      await loyalty.recordProviderCallDone(placed);
      const afterDone = await loyalty.credit(placed, 17);

      expect(first).toEqual({ outcome: 'applied', providerCallPending: true });
      expect(beforeDone).toEqual({ outcome: 'duplicate', providerCallPending: true });
      expect(afterDone).toEqual({ outcome: 'duplicate', providerCallPending: false });
      expect(await inboxEntry('loyalty', placed)).toMatchObject({ providerCallDoneAt: expect.any(String) });
    });

    test('the claim takes the provider-call lease: a concurrent duplicate is refused it until it lapses, its holder may take it again', async () => {
      const { loyalty } = ledgers();
      const placed = orderPlacedEvent(uniqueOrder(), '2026-01-01T00:00:00.000Z');
      const now = Date.now();
      const first = {
        signal: new AbortController().signal,
        deadline: now + 25_000,
        leaseUntil: now + 32_000,
        leaseHolder: 'req-1:m-1',
      };
      const second = { ...first, leaseHolder: 'req-2:m-2' };
      const lapsed = { ...first, leaseHolder: 'req-3:m-3', leaseUntil: now + 90_000 };

      await loyalty.credit(placed, 17, first);
      const duplicate = await loyalty.credit(placed, 17, second);
      const whileHeld = await loyalty.leaseProviderCall(placed, second);
      const byItsHolder = await loyalty.leaseProviderCall(placed, first);
      await store.documents.send(
        new UpdateCommand({
          TableName: store.tables.effects,
          Key: inboxKey('loyalty', placed.eventId, placed.tenant),
          UpdateExpression: 'SET providerCallLeaseUntil = :past',
          ExpressionAttributeValues: { ':past': now - 1 },
        }),
      );
      const afterItLapsed = await loyalty.leaseProviderCall(placed, lapsed);

      expect(duplicate).toEqual({ outcome: 'duplicate', providerCallPending: true });
      expect([whileHeld, byItsHolder, afterItLapsed]).toEqual(['held', 'granted', 'granted']);
      expect(await inboxEntry('loyalty', placed)).toMatchObject({
        providerCallLeaseHolder: 'req-3:m-3',
        providerCallLeaseUntil: now + 90_000,
      });
    });

    test('a lease given back by its holder is free at once; one given back by another stays', async () => {
      const { loyalty } = ledgers();
      const placed = orderPlacedEvent(uniqueOrder(), '2026-01-01T00:00:00.000Z');
      const now = Date.now();
      const holder = {
        signal: new AbortController().signal,
        deadline: now + 25_000,
        leaseUntil: now + 32_000,
        leaseHolder: 'req-1:m-1',
      };
      const other = { ...holder, leaseHolder: 'req-2:m-2' };
      await loyalty.credit(placed, 17, holder);

      await loyalty.releaseProviderCallLease(placed, other);
      const stillHeld = await loyalty.leaseProviderCall(placed, other);
      await loyalty.releaseProviderCallLease(placed, holder);
      const free = await loyalty.leaseProviderCall(placed, other);

      expect([stillHeld, free]).toEqual(['held', 'granted']);
    });

    test('no lease is granted for a call recorded done or superseded: the duplicate calls nothing', async () => {
      const { loyalty, fulfilment } = ledgers();
      const order = uniqueOrder();
      const placedForMail = orderPlacedEvent(uniqueOrder(), '2026-01-01T00:00:00.000Z');
      const placed = orderPlacedEvent(order, order.createdAt);
      const now = Date.now();
      const work = {
        signal: new AbortController().signal,
        deadline: now - 10_000,
        leaseUntil: now - 1,
        leaseHolder: 'req-1:m-1',
      };
      const later = { ...work, leaseUntil: now + 32_000, leaseHolder: 'req-2:m-2' };
      await loyalty.credit(placedForMail, 17, work);
      await loyalty.recordProviderCallDone(placedForMail, work);
      await fulfilment.reserve(placed, work);
      await fulfilment.release(orderCancelledEvent(order, '2026-01-01T00:01:00.000Z'), work);

      const afterDone = await loyalty.leaseProviderCall(placedForMail, later);
      const afterCancel = await fulfilment.leaseProviderCall(placed, later);

      expect([afterDone, afterCancel]).toEqual(['done', 'done']);
    });

    test('recording a provider call done for an event never claimed fails and creates no entry', async () => {
      const { loyalty } = ledgers();
      const placed = orderPlacedEvent(uniqueOrder(), '2026-01-01T00:00:00.000Z');

      await expect(loyalty.recordProviderCallDone(placed)).rejects.toThrow();

      expect(await inboxEntry('loyalty', placed)).toBeUndefined();
    });

    test('a release marks the place superseded: a later duplicate of the place owes the warehouse nothing', async () => {
      const { fulfilment } = ledgers();
      const order = uniqueOrder();
      const placed = orderPlacedEvent(order, order.createdAt);
      await fulfilment.reserve(placed);
      const cancelled = orderCancelledEvent(order, '2026-01-01T00:01:00.000Z');

      const release = await fulfilment.release(cancelled);
      const redriven = await fulfilment.reserve(placed);

      expect(release).toEqual({ outcome: 'applied', providerCallPending: true });
      expect(redriven).toEqual({ outcome: 'duplicate', providerCallPending: false });
      const entry = await inboxEntry('fulfilment', placed);
      expect(entry).toMatchObject({ supersededBy: cancelled.eventId, claimedAt: expect.any(String) });
      expect(entry?.providerCallDoneAt).toBeUndefined();
    });

    test('a stale event owes the provider nothing', async () => {
      const { fulfilment } = ledgers();
      const order = uniqueOrder();
      await fulfilment.release(orderCancelledEvent(order, order.createdAt));

      const late = await fulfilment.reserve(orderPlacedEvent(order, order.createdAt));

      expect(late).toEqual({ outcome: 'stale', providerCallPending: false });
    });

    test('with the inbox claim switched off (test-only), a duplicate is applied twice', async () => {
      const { loyalty, reader } = ledgers();
      const placed = orderPlacedEvent(uniqueOrder(), '2026-01-01T00:00:00.000Z');
      inboxDisabled = true;

      const outcomes = [await loyalty.credit(placed, 17), await loyalty.credit(placed, 17)];

      expect(outcomes.map((r) => r.outcome)).toEqual(['applied', 'applied']);
      expect(await reader.customerPoints('caller-1', placed.payload.customerId)).toBe(34);
    });

    test('with the inbox claim switched off, a duplicate reserve reserves twice; a duplicate release is stale', async () => {
      const { fulfilment, reader } = ledgers();
      const order = uniqueOrder();
      const placed = orderPlacedEvent(order, order.createdAt);
      const cancelled = orderCancelledEvent(order, '2026-01-01T00:01:00.000Z');
      inboxDisabled = true;

      const reserves = [await fulfilment.reserve(placed), await fulfilment.reserve(placed)];
      const releases = [await fulfilment.release(cancelled), await fulfilment.release(cancelled)];

      expect([...reserves, ...releases].map((r) => r.outcome)).toEqual(['applied', 'applied', 'applied', 'stale']);
      expect(await reader.reservedStock(order.items[0].sku)).toBe(3);
      expect(await inboxEntry('fulfilment', placed)).toBeUndefined();
    });
  });
}

export function describeOrderOutboxContract(name: string, makeStore: () => Promise<TableStore>): void {
  describe(`order repository and outbox contract: ${name}`, () => {
    let store: TableStore;
    const ports = () => ({
      orders: new DynamoDbOrderRepository(store.documents, store.tables.orders),
      outbox: new DynamoDbOutboxStore(store.documents, store.tables.orders, ORDER_PK_PREFIX),
    });
    beforeAll(async () => {
      store = await makeStore();
    });
    afterAll(() => store.drop?.());

    test('place writes once; placing again returns the stored order from the failed condition', async () => {
      const { orders } = ports();
      const order = uniqueOrder();
      const event = orderPlacedEvent(order, order.createdAt);

      const first = await orders.place(order, event);
      const second = await orders.place({ ...order, fingerprint: 'other' }, event);

      expect(first).toEqual({ kind: 'created' });
      expect(second).toEqual({ kind: 'exists', order });
      expect(await orders.get(order.orderId)).toEqual(order);
    });

    test('cancel moves PLACED to CANCELLED once; a second cancel is refused and returns the cancelled order', async () => {
      const { orders } = ports();
      const order = uniqueOrder();
      await orders.place(order, orderPlacedEvent(order, order.createdAt));
      const at = '2026-01-01T00:05:00.000Z';

      const first = await orders.cancel(order, at, orderCancelledEvent(order, at));
      const second = await orders.cancel(order, at, orderCancelledEvent(order, at));

      expect(first).toEqual({ kind: 'cancelled', order: { ...order, status: 'CANCELLED', cancelledAt: at } });
      expect(second).toEqual({ kind: 'not-cancellable', order: { ...order, status: 'CANCELLED', cancelledAt: at } });
    });

    test('a placed event is pending until marked dispatched, and marked dispatched only the first time', async () => {
      const { orders, outbox } = ports();
      const order = { ...uniqueOrder(), createdAt: '2000-01-01T00:00:00.000Z' };
      const event = orderPlacedEvent(order, order.createdAt);
      await orders.place(order, event);
      const pendingIds = async () =>
        (await outbox.pendingOlderThan(new Date('2000-01-01T00:00:01.000Z'), 500)).map(
          (p) => (p.event as OrderEvent).eventId,
        );

      const before = await pendingIds();
      const oldestBefore = await outbox.oldestPendingCreatedAt();
      const marks = [await outbox.markDispatched(event, new Date()), await outbox.markDispatched(event, new Date())];
      const after = await pendingIds();

      expect(before).toContain(event.eventId);
      expect(oldestBefore).toBe('2000-01-01T00:00:00.000Z');
      expect(marks).toEqual([true, false]);
      expect(after).not.toContain(event.eventId);
    });

    test('a dispatched item expires its retention after its first dispatch; a second mark keeps that expiry, and the order carries none', async () => {
      const { orders } = ports();
      const outbox = new DynamoDbOutboxStore(store.documents, store.tables.orders, ORDER_PK_PREFIX, 7 * 86_400);
      const order = { ...uniqueOrder(), createdAt: '2000-01-01T00:00:00.000Z' };
      const event = orderPlacedEvent(order, order.createdAt);
      await orders.place(order, event);
      const read = async (sk: string) =>
        (
          await store.documents.send(
            new GetCommand({
              TableName: store.tables.orders,
              Key: { pk: `${ORDER_PK_PREFIX}${order.orderId}`, sk },
              ConsistentRead: true,
            }),
          )
        ).Item;

      await outbox.markDispatched(event, new Date('2026-12-05T10:00:00.000Z'));
      await outbox.markDispatched(event, new Date('2026-12-06T10:00:00.000Z'));

      expect((await read(`OUTBOX#${event.eventId}`))?.[OUTBOX_TTL_ATTRIBUTE]).toBe(
        Date.parse('2026-12-12T10:00:00.000Z') / 1000,
      );
      expect((await read('ORDER'))?.[OUTBOX_TTL_ATTRIBUTE]).toBeUndefined();
    });

    test('pendingOlderThan leaves out events created at or after the cut-off', async () => {
      const { orders, outbox } = ports();
      const order = { ...uniqueOrder(), createdAt: '2001-01-01T00:00:00.000Z' };
      const event = orderPlacedEvent(order, order.createdAt);
      await orders.place(order, event);

      const pending = await outbox.pendingOlderThan(new Date(order.createdAt), 500);

      expect(pending.map((p) => (p.event as OrderEvent).eventId)).not.toContain(event.eventId);
    });

    test('marking an event that is not in the outbox fails', async () => {
      const { outbox } = ports();
      const order = uniqueOrder();

      await expect(outbox.markDispatched(orderPlacedEvent(order, order.createdAt), new Date())).rejects.toThrow();
    });
  });
}

export function describeTryCounterContract(name: string, makeStore: () => Promise<TableStore>): void {
  describe(`try counter contract: ${name}`, () => {
    let store: TableStore;
    // The real clock, to the second: with a fixed past date the item's TTL is already past, and DynamoDB Local
    // deletes expired items in the background, so the read after the writes could find nothing.
    const now = new Date(Math.floor(Date.now() / 1000) * 1000);
    beforeAll(async () => {
      store = await makeStore();
    });
    afterAll(() => store.drop?.());

    test('counts failed tries per consumer and message: 1, 2, 3; another message starts at 1', async () => {
      const counter = new DynamoDbTryCounter(store.documents, {
        tableName: store.tables.effects,
        ttlSeconds: 3_600,
        now: () => now,
      });
      const messageId = `msg-${process.pid}-${Date.now()}-${++sequence}`;

      const counts = [
        await counter.recordFailedTry('fulfilment', messageId),
        await counter.recordFailedTry('fulfilment', messageId),
        await counter.recordFailedTry('fulfilment', messageId),
        await counter.recordFailedTry('fulfilment', `${messageId}.other`),
        await counter.recordFailedTry('loyalty', messageId),
      ];

      expect(counts).toEqual([1, 2, 3, 1, 1]);
      const { Item } = await store.documents.send(
        new GetCommand({
          TableName: store.tables.effects,
          Key: { pk: `TRIES#fulfilment#${messageId}`, sk: 'TRIES' },
          ConsistentRead: true,
        }),
      );
      expect(Item).toMatchObject({
        tries: 3,
        firstFailedAt: now.toISOString(),
        lastFailedAt: now.toISOString(),
        [INBOX_TTL_ATTRIBUTE]: Math.floor(now.getTime() / 1000) + 3_600,
      });
    });
  });
}
