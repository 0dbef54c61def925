import { GetCommand, TransactWriteCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDbTryCounter } from '@exactly-once/runtime/aws/dynamodb-try-counter';
import { INBOX_TTL_ATTRIBUTE, inboxKey } from '@exactly-once/runtime/aws/inbox-table';
import { withoutInbox } from '@exactly-once/runtime/faults/inbox-bypass';
import { DynamoDbOutboxStore } from '@exactly-once/runtime/aws/dynamodb-outbox-store';
import { OUTBOX_TTL_ATTRIBUTE, outboxSk } from '@exactly-once/runtime/aws/outbox-table';
import type { EventEnvelope } from '@exactly-once/runtime';
import { thingHappened, thingUndone } from '../../exactly-once/fixtures/probe-events';
import { ProbeLedger, ProbeLedgerReader } from '../../exactly-once/fixtures/probe-ledger';
import { recordThing, THING_PK_PREFIX, thingKey } from '../../exactly-once/fixtures/probe-things';

/** A store's setup may synthesize a stack and create its tables or queues (the emulator side) while other suites load both cores. */
const STORE_SETUP_MS = 180_000;
/**
 * Port contract suites of the mechanism. Each runs the real adapters against a table store
 * given by the caller: the simulation's in-memory DynamoDB (unit project) and
 * DynamoDB Local (integration project, tables created from the mechanism's construct's
 * synthesized template). Whatever the simulation relies on is pinned here, so the
 * in-memory store cannot behave differently from DynamoDB unnoticed. The ledger under the
 * inbox is the neutral fixture's (probe-ledger.ts), the outbox the fixture's things'.
 */
export interface TableStore {
  documents: DynamoDBDocumentClient;
  /** `outbox`: the application's table that holds the outbox items (its entities' partitions). */
  tables: { outbox: string; effects: string };
  drop?: () => Promise<void>;
}

let sequence = 0;
/** A thing no other test (or run on the same tables) uses. */
function uniqueThing(): string {
  sequence += 1;
  return `thing-${process.pid}-${Date.now()}-${sequence}`;
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
        things: new ProbeLedger(documents('probe-fifo'), { ...options, consumer: 'probe-fifo' }),
        totals: new ProbeLedger(documents('probe'), { ...options, consumer: 'probe' }),
        reader: new ProbeLedgerReader(store.documents, store.tables.effects),
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
    const happened = (entityId: string, amount = 3) => thingHappened(entityId, { payload: { amount } });
    const undone = (entityId: string, amount = 3) => thingUndone(entityId, { payload: { amount } });
    beforeAll(async () => {
      store = await makeStore();
    }, STORE_SETUP_MS);
    afterAll(() => store.drop?.());
    afterEach(() => {
      inboxDisabled = false;
    });

    test('an effect applies once; the same event again is a duplicate and tallies nothing more', async () => {
      const { things, reader } = ledgers();
      const event = happened(uniqueThing());

      const outcomes = [await things.happen(event), await things.happen(event)];

      expect(outcomes.map((r) => r.outcome)).toEqual(['applied', 'duplicate']);
      expect(await reader.tally(event.entityId)).toBe(3);
      expect(await reader.state(event.entityId)).toMatchObject({ version: 1, state: 'HAPPENED' });
    });

    test('an undo after its effect takes it back once; a duplicate undo changes nothing', async () => {
      const { things, reader } = ledgers();
      const thing = uniqueThing();
      await things.happen(happened(thing));
      const undo = undone(thing);

      const outcomes = [await things.undo(undo), await things.undo(undo)];

      expect(outcomes.map((r) => r.outcome)).toEqual(['applied', 'duplicate']);
      expect(await reader.tally(thing)).toBe(0);
    });

    test('an undo that overtakes its effect is recorded, and the late effect is stale: nothing tallied', async () => {
      const { things, reader } = ledgers();
      const thing = uniqueThing();

      const undo = await things.undo(undone(thing));
      const effect = await things.happen(happened(thing));

      expect([undo.outcome, effect.outcome]).toEqual(['applied', 'stale']);
      expect(await reader.tally(thing)).toBeUndefined();
      expect(await reader.state(thing)).toMatchObject({ version: 2, state: 'UNDONE_FIRST' });
    });

    test('an undo of an undone thing under a new event id is stale (version check), not a second undo', async () => {
      const { things, reader } = ledgers();
      const thing = uniqueThing();
      await things.happen(happened(thing));
      const undo = undone(thing);
      await things.undo(undo);

      const again = await things.undo({ ...undo, eventId: `${undo.eventId}.resent` });

      expect(again.outcome).toBe('stale');
      expect(await reader.tally(thing)).toBe(0);
    });

    test('an ADD applies once per event id; a duplicate adds nothing', async () => {
      const { totals, reader } = ledgers();
      const account = `account-${uniqueThing()}`;
      const first = happened(uniqueThing());
      const second = happened(uniqueThing());

      const outcomes = [
        await totals.add(first, 17, account),
        await totals.add(first, 17, account),
        await totals.add(second, 5, account),
      ];

      expect(outcomes.map((r) => r.outcome)).toEqual(['applied', 'duplicate', 'applied']);
      expect(await reader.total(account)).toBe(22);
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
      const { totals } = ledgers();
      const event = happened(uniqueThing());
      const account = `account-${event.entityId}`;
      const first = await totals.add(event, 17, account);

      const beforeDone = await totals.add(event, 17, account);
      await totals.recordProviderCallDone(event);
      const afterDone = await totals.add(event, 17, account);

      expect(first).toEqual({ outcome: 'applied', providerCallPending: true, claim: expect.any(Object) });
      expect(beforeDone).toEqual({ outcome: 'duplicate', providerCallPending: true, claim: expect.any(Object) });
      expect(afterDone).toEqual({ outcome: 'duplicate', providerCallPending: false, claim: expect.any(Object) });
      expect(await inboxEntry('probe', event)).toMatchObject({ providerCallDoneAt: expect.any(String) });
    });

    test('the claim takes the provider-call lease: a concurrent duplicate is refused it until it lapses, its holder may take it again', async () => {
      const { totals } = ledgers();
      const event = happened(uniqueThing());
      const account = `account-${event.entityId}`;
      const now = Date.now();
      const first = {
        signal: new AbortController().signal,
        deadline: now + 25_000,
        leaseUntil: now + 32_000,
        leaseHolder: 'req-1:m-1',
      };
      const second = { ...first, leaseHolder: 'req-2:m-2' };
      const lapsed = { ...first, leaseHolder: 'req-3:m-3', leaseUntil: now + 90_000 };

      await totals.add(event, 17, account, first);
      const duplicate = await totals.add(event, 17, account, second);
      const whileHeld = await totals.leaseProviderCall(event, second);
      const byItsHolder = await totals.leaseProviderCall(event, first);
      await store.documents.send(
        new UpdateCommand({
          TableName: store.tables.effects,
          Key: inboxKey('probe', event.eventId, event.tenant),
          UpdateExpression: 'SET providerCallLeaseUntil = :past',
          ExpressionAttributeValues: { ':past': now - 1 },
        }),
      );
      const afterItLapsed = await totals.leaseProviderCall(event, lapsed);

      expect(duplicate).toEqual({ outcome: 'duplicate', providerCallPending: true, claim: expect.any(Object) });
      expect([whileHeld, byItsHolder, afterItLapsed]).toEqual(['held', 'granted', 'granted']);
      expect(await inboxEntry('probe', event)).toMatchObject({
        providerCallLeaseHolder: 'req-3:m-3',
        providerCallLeaseUntil: now + 90_000,
      });
    });

    test('a lease given back by its holder is free at once; one given back by another stays', async () => {
      const { totals } = ledgers();
      const event = happened(uniqueThing());
      const now = Date.now();
      const holder = {
        signal: new AbortController().signal,
        deadline: now + 25_000,
        leaseUntil: now + 32_000,
        leaseHolder: 'req-1:m-1',
      };
      const other = { ...holder, leaseHolder: 'req-2:m-2' };
      await totals.add(event, 17, `account-${event.entityId}`, holder);

      await totals.releaseProviderCallLease(event, other);
      const stillHeld = await totals.leaseProviderCall(event, other);
      await totals.releaseProviderCallLease(event, holder);
      const free = await totals.leaseProviderCall(event, other);

      expect([stillHeld, free]).toEqual(['held', 'granted']);
    });

    test('no lease is granted for a call recorded done or superseded: the duplicate calls nothing', async () => {
      const { totals, things } = ledgers();
      const added = happened(uniqueThing());
      const thing = uniqueThing();
      const effect = happened(thing);
      const now = Date.now();
      const work = {
        signal: new AbortController().signal,
        deadline: now - 10_000,
        leaseUntil: now - 1,
        leaseHolder: 'req-1:m-1',
      };
      const later = { ...work, leaseUntil: now + 32_000, leaseHolder: 'req-2:m-2' };
      await totals.add(added, 17, `account-${added.entityId}`, work);
      await totals.recordProviderCallDone(added, work);
      await things.happen(effect, work);
      await things.undo(undone(thing), work);

      const afterDone = await totals.leaseProviderCall(added, later);
      const afterUndo = await things.leaseProviderCall(effect, later);

      expect([afterDone, afterUndo]).toEqual(['done', 'done']);
    });

    test('recording a provider call done for an event never claimed fails and creates no entry', async () => {
      const { totals } = ledgers();
      const event = happened(uniqueThing());

      await expect(totals.recordProviderCallDone(event)).rejects.toThrow();

      expect(await inboxEntry('probe', event)).toBeUndefined();
    });

    test('an undo marks the earlier event superseded: a later duplicate of it owes the provider nothing', async () => {
      const { things } = ledgers();
      const thing = uniqueThing();
      const effect = happened(thing);
      await things.happen(effect);
      const undo = undone(thing);

      const undoResult = await things.undo(undo);
      const redriven = await things.happen(effect);

      expect(undoResult).toEqual({ outcome: 'applied', providerCallPending: true, claim: expect.any(Object) });
      expect(redriven).toEqual({ outcome: 'duplicate', providerCallPending: false, claim: expect.any(Object) });
      const entry = await inboxEntry('probe-fifo', effect);
      expect(entry).toMatchObject({ supersededBy: undo.eventId, claimedAt: expect.any(String) });
      expect(entry?.providerCallDoneAt).toBeUndefined();
    });

    test('a stale event owes the provider nothing', async () => {
      const { things } = ledgers();
      const thing = uniqueThing();
      await things.undo(undone(thing));

      const late = await things.happen(happened(thing));

      expect(late).toEqual({ outcome: 'stale', providerCallPending: false });
    });

    test('with the inbox claim switched off (test-only), a duplicate is applied twice', async () => {
      const { totals, reader } = ledgers();
      const event = happened(uniqueThing());
      const account = `account-${event.entityId}`;
      inboxDisabled = true;

      const outcomes = [await totals.add(event, 17, account), await totals.add(event, 17, account)];

      expect(outcomes.map((r) => r.outcome)).toEqual(['applied', 'applied']);
      expect(await reader.total(account)).toBe(34);
    });

    test('with the inbox claim switched off, a duplicate effect applies twice; a duplicate undo is stale', async () => {
      const { things, reader } = ledgers();
      const entityId = uniqueThing();
      inboxDisabled = true;

      const effects = [await things.happen(happened(entityId)), await things.happen(happened(entityId))];
      const undos = [await things.undo(undone(entityId)), await things.undo(undone(entityId))];

      expect([...effects, ...undos].map((r) => r.outcome)).toEqual(['applied', 'applied', 'applied', 'stale']);
      expect(await reader.tally(entityId)).toBe(3);
      expect(await inboxEntry('probe-fifo', happened(entityId))).toBeUndefined();
    });
  });
}

export function describeOutboxContract(name: string, makeStore: () => Promise<TableStore>): void {
  describe(`outbox contract: ${name}`, () => {
    let store: TableStore;
    const outboxStore = (dispatchedRetentionSeconds?: number) =>
      new DynamoDbOutboxStore(store.documents, store.tables.outbox, THING_PK_PREFIX, dispatchedRetentionSeconds);
    /** A thing's event, at `occurredAt`, written with its thing in one transaction (its outbox item pending). */
    const recorded = async (occurredAt: string): Promise<EventEnvelope> => {
      const event = thingHappened(uniqueThing(), { occurredAt });
      await recordThing(store.documents, store.tables.outbox, event);
      return event;
    };
    beforeAll(async () => {
      store = await makeStore();
    }, STORE_SETUP_MS);
    afterAll(() => store.drop?.());

    test('an event is pending until marked dispatched, and marked dispatched only the first time', async () => {
      const outbox = outboxStore();
      const event = await recorded('2000-01-01T00:00:00.000Z');
      const pendingIds = async () =>
        (await outbox.pendingOlderThan(new Date('2000-01-01T00:00:01.000Z'), 500)).map(
          (p) => (p.event as EventEnvelope).eventId,
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

    test('a dispatched item expires its retention after its first dispatch; a second mark keeps that expiry, and the entity carries none', async () => {
      const outbox = outboxStore(7 * 86_400);
      const event = await recorded('2000-01-01T00:00:00.000Z');
      const read = async (key: { pk: string; sk: string }) =>
        (await store.documents.send(new GetCommand({ TableName: store.tables.outbox, Key: key, ConsistentRead: true })))
          .Item;

      await outbox.markDispatched(event, new Date('2026-12-05T10:00:00.000Z'));
      await outbox.markDispatched(event, new Date('2026-12-06T10:00:00.000Z'));

      expect((await read({ ...thingKey(event.entityId), sk: outboxSk(event.eventId) }))?.[OUTBOX_TTL_ATTRIBUTE]).toBe(
        Date.parse('2026-12-12T10:00:00.000Z') / 1000,
      );
      expect(await read(thingKey(event.entityId))).toMatchObject({ entity: 'THING' });
      expect((await read(thingKey(event.entityId)))?.[OUTBOX_TTL_ATTRIBUTE]).toBeUndefined();
    });

    test('pendingOlderThan leaves out events created at or after the cut-off', async () => {
      const outbox = outboxStore();
      const event = await recorded('2001-01-01T00:00:00.000Z');

      const pending = await outbox.pendingOlderThan(new Date(event.occurredAt), 500);

      expect(pending.map((p) => (p.event as EventEnvelope).eventId)).not.toContain(event.eventId);
    });

    test('marking an event that is not in the outbox fails', async () => {
      const outbox = outboxStore();

      await expect(outbox.markDispatched(thingHappened(uniqueThing()), new Date())).rejects.toThrow();
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
    }, STORE_SETUP_MS);
    afterAll(() => store.drop?.());

    test('counts failed tries per consumer and message: 1, 2, 3; another message starts at 1', async () => {
      const counter = new DynamoDbTryCounter(store.documents, {
        tableName: store.tables.effects,
        ttlSeconds: 3_600,
        now: () => now,
      });
      const messageId = `msg-${process.pid}-${Date.now()}-${++sequence}`;

      const counts = [
        await counter.recordFailedTry('probe-fifo', messageId),
        await counter.recordFailedTry('probe-fifo', messageId),
        await counter.recordFailedTry('probe-fifo', messageId),
        await counter.recordFailedTry('probe-fifo', `${messageId}.other`),
        await counter.recordFailedTry('probe', messageId),
      ];

      expect(counts).toEqual([1, 2, 3, 1, 1]);
      const { Item } = await store.documents.send(
        new GetCommand({
          TableName: store.tables.effects,
          Key: { pk: `TRIES#probe-fifo#${messageId}`, sk: 'TRIES' },
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
