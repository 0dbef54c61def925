import { GetCommand, ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDbSequencedEntityEffectLedger } from '@exactly-once/runtime/aws/sequenced-entity-effect-ledger';
import { DynamoDbEntityEffectLedger } from '@exactly-once/runtime/aws/entity-effect-ledger';
import {
  EntityConditionFailed,
  SequencedLedger,
  sequencedEntityKey,
  type SequencedLedgerOptions,
} from '@exactly-once/runtime/aws/sequenced-ledger';
import { EffectConditionFailed, type TransactItem } from '@exactly-once/runtime/aws/inbox-ledger';
import { ProviderCallInProgress, type RecordWork } from '@exactly-once/runtime/consumer/record-work';
import type { EventEnvelope } from '@exactly-once/runtime/envelope';
import { applyEntityEffect } from '@exactly-once/runtime/inbox/entity-effect';
import type { LedgerResult } from '@exactly-once/runtime/inbox/ports';
import { providerKey } from '@exactly-once/runtime/inbox/keys';
import { callProviderIfOwed } from '@exactly-once/runtime/provider/call-provider-if-owed';
import { stripeLikeProvider } from './providers';
import { logger } from '@exactly-once/runtime/runtime/observability';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { recordSequencedProviderCallFinding } from '@exactly-once/tools/dlq/provider-window';

/** Where the cases run: a document client on an Effects table (pk, sk), in memory or on DynamoDB Local. */
export interface SequencedLedgerBackend {
  documents: () => DynamoDBDocumentClient;
  /** A low-level client on the same table (what the DLQ tool writes a person's finding with). */
  raw: () => DynamoDBClient;
  tableName: () => string;
  /** Whether the backend refuses a key over 2 KB as DynamoDB does (the in-memory one does not check sizes). */
  enforcesKeySize: boolean;
}

/**
 * A ledger whose newer event supersedes the call an older one still owes (as fulfilment's cancel
 * supersedes the PICK it cancels): the entity's item holds one owed call, the last event's.
 */
class SupersedingLedger extends SequencedLedger {
  constructor(documents: DynamoDBDocumentClient, options: SequencedLedgerOptions) {
    super(documents, options, true);
  }

  /** `onlyFrom`: the state the item must be in for the event to apply (the effect's own condition). */
  apply(event: EventEnvelope, work?: RecordWork, onlyFrom?: string): Promise<LedgerResult> {
    return this.claimOnEntity(
      event,
      sequencedEntityKey(this.consumer, event).pk,
      {
        set: ['#state = :type'],
        names: { '#state': 'state' },
        values: { ':type': event.type, ...(onlyFrom === undefined ? {} : { ':from': onlyFrom }) },
        ...(onlyFrom === undefined ? {} : { condition: '#state = :from' }),
      },
      work,
    );
  }
}

/**
 * A fulfilment-like ledger on the sequenced ledger: an entity's place reserves stock on a shared STOCK item
 * in the same transaction as the claim on the entity's item; its cancel releases it only where the place
 * was applied (the effect's condition on the entity item), and otherwise records the cancel alone, so a
 * late place is stale. A cancel supersedes the owed call of its place.
 */
export class StockLedger extends SequencedLedger {
  constructor(documents: DynamoDBDocumentClient, options: SequencedLedgerOptions) {
    super(documents, options, true);
  }

  place(event: EventEnvelope, work?: RecordWork, stockCondition?: string): Promise<LedgerResult> {
    return this.claimOnEntity(event, this.pkOf(event), this.state('RESERVED'), work, [this.stock(+1, stockCondition)]);
  }

  async cancel(event: EventEnvelope, work?: RecordWork): Promise<LedgerResult> {
    try {
      const released = { ...this.state('RELEASED'), condition: 'attribute_exists(#placed)' };
      return await this.claimOnEntity(
        event,
        this.pkOf(event),
        { ...released, names: { ...released.names, '#placed': 'seq' } },
        work,
        [this.stock(-1)],
      );
    } catch (error) {
      if (!(error instanceof EntityConditionFailed)) throw error;
      // Nothing placed yet: the cancel overtook its place, which will then be stale.
      return this.claimOnEntity(event, this.pkOf(event), this.state('CANCELLED_UNPLACED'), work);
    }
  }

  stockKey() {
    return { pk: `STOCK#${this.consumer}`, sk: 'STOCK' };
  }

  private pkOf(event: EventEnvelope): string {
    return sequencedEntityKey(this.consumer, event).pk;
  }

  private state(state: string) {
    return { set: ['#state = :state'], names: { '#state': 'state' }, values: { ':state': state } };
  }

  private stock(delta: number, condition?: string): TransactItem {
    return {
      Update: {
        TableName: this.options.tableName,
        Key: this.stockKey(),
        UpdateExpression: 'ADD reserved :delta',
        ExpressionAttributeValues: { ':delta': delta },
        ...(condition === undefined
          ? {}
          : { ConditionExpression: condition, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' }),
      },
    };
  }
}

let consumers = 0;

/**
 * The sequenced ledger's cases, the same on the in-memory DynamoDB (test/unit/sequenced-ledger.test.ts)
 * and on DynamoDB Local (test/integration/sequenced-ledger.test.ts): each delivers the same thing again
 * and checks the effect and the provider calls directly. Each case has a consumer of its own, so they
 * share one table.
 */
export function sequencedLedgerCases(backend: SequencedLedgerBackend): void {
  /** The generic effect on the sequenced ledger, with a Stripe-like provider (down while `state.down`). */
  function parts(options: { now?: () => Date } = {}) {
    const consumer = `seq-${(consumers += 1)}`;
    const { provider, calls, performed, state } = stripeLikeProvider();
    const ledger = new DynamoDbSequencedEntityEffectLedger(backend.documents(), {
      consumer,
      tableName: backend.tableName(),
      now: options.now,
    });
    const deps = { consumer, eventTypes: ['ThingHappened', 'ThingUndone'], ledger, provider };
    const item = async (entityId: string, tenant?: string) =>
      (
        await backend.documents().send(
          new GetCommand({
            TableName: backend.tableName(),
            Key: sequencedEntityKey(consumer, { entityId, tenant }),
            ConsistentRead: true,
          }),
        )
      ).Item;
    /** Every item of this consumer's, whatever its key: the claims are on the entity items, nowhere else. */
    const itemsOfConsumer = async () =>
      ((await backend.documents().send(new ScanCommand({ TableName: backend.tableName() }))).Items ?? []).filter((i) =>
        String(i.pk).includes(`#${consumer}#`),
      );
    return {
      consumer,
      ledger,
      calls,
      performed,
      state,
      deps,
      item,
      itemsOfConsumer,
      apply: (event: EventEnvelope, w?: RecordWork) => applyEntityEffect(event, deps, w),
    };
  }

  const envelope = (eventId: string, entityId: string, version = 1, payload: Record<string, unknown> = {}) =>
    ({
      eventId,
      type: 'ThingHappened',
      entityId,
      version,
      occurredAt: new Date(Date.now() - 60_000).toISOString(),
      payload,
    }) satisfies EventEnvelope;

  test('the same event delivered twice: one effect, one provider call, one item and no inbox entry', async () => {
    const p = parts();
    const event = envelope('evt-1', 'entity-1');

    const outcomes = [await p.apply(event, work()), await p.apply(event, work())];

    expect(outcomes).toEqual(['applied', 'duplicate']);
    expect(p.calls).toEqual([`${p.consumer}:evt-1`]);
    const items = await p.itemsOfConsumer();
    expect(items).toEqual([
      expect.objectContaining({ appliedCount: 1, lastEventId: 'evt-1', seq: 1, seqEventId: 'evt-1' }),
    ]);
    // The claim never expires, and the done-mark left no owed call behind.
    expect(Object.keys(items[0]).filter((k) => k === 'expiresAt' || k.startsWith('owedCall'))).toEqual([]);
  });

  test('another event under a used eventId (other content) is EventIdReused: nothing written, no call', async () => {
    const p = parts();
    const first = envelope('evt-2', 'entity-2');
    await p.apply(first, work());
    const before = await p.item('entity-2');

    const reused = p.apply({ ...first, payload: { forged: true } }, work());

    await expect(reused).rejects.toMatchObject({
      permanentCause: 'EventIdReused',
      details: { storedFingerprint: before?.seqFingerprint, deliveredFingerprint: expect.stringMatching(/^v2:/) },
    });
    expect(await p.item('entity-2')).toEqual(before);
    expect(p.calls).toEqual([`${p.consumer}:evt-2`]);
  });

  test('an eventId reused for a newer version of its entity is EventIdReused, not applied', async () => {
    const p = parts();
    await p.apply(envelope('evt-2b', 'entity-2b', 1), work());
    const before = await p.item('entity-2b');

    const reused = p.apply(envelope('evt-2b', 'entity-2b', 2), work());

    await expect(reused).rejects.toMatchObject({ permanentCause: 'EventIdReused' });
    expect(await p.item('entity-2b')).toEqual(before);
  });

  test('a forged copy of an event whose call is still owed is EventIdReused: the owed call stays, not made', async () => {
    const p = parts();
    const event = envelope('evt-2c', 'entity-2c');
    p.state.down = true;
    await expect(p.apply(event, work())).rejects.toThrow('provider down');
    p.state.down = false;
    const before = await p.item('entity-2c');

    const forged = p.apply({ ...event, payload: { forged: true } }, work());

    await expect(forged).rejects.toMatchObject({ permanentCause: 'EventIdReused' });
    expect(await p.item('entity-2c')).toEqual(before);
    expect(p.calls).toEqual([]);
  });

  test('an eventId whose call is still owed, reused for a later version after another event, is EventIdReused', async () => {
    const p = parts();
    p.state.down = true;
    await expect(p.apply(envelope('evt-2d', 'entity-2d', 1), work())).rejects.toThrow('provider down');
    p.state.down = false;
    await p.apply(envelope('evt-2e', 'entity-2d', 2), work());
    const before = await p.item('entity-2d');

    const reused = p.apply(envelope('evt-2d', 'entity-2d', 3), work());

    await expect(reused).rejects.toMatchObject({ permanentCause: 'EventIdReused' });
    expect(await p.item('entity-2d')).toEqual(before);
  });

  test('another event at a version already applied is VersionReused: nothing written, no call', async () => {
    const p = parts();
    await p.apply(envelope('evt-3a', 'entity-3', 1), work());
    const before = await p.item('entity-3');

    const reused = p.apply(envelope('evt-3b', 'entity-3', 1), work());

    await expect(reused).rejects.toMatchObject({
      name: 'PermanentError',
      permanentCause: 'VersionReused',
      details: { appliedEventId: 'evt-3a', appliedFingerprint: before?.seqFingerprint },
    });
    expect(await p.item('entity-3')).toEqual(before);
    expect(p.calls).toEqual([`${p.consumer}:evt-3a`]);
  });

  test('an older version after a newer one is stale: acknowledged without effect or call, and said so', async () => {
    const p = parts();
    await p.apply(envelope('evt-4b', 'entity-4', 2), work());
    const said = jest.spyOn(logger, 'info');

    const older = await p.apply(envelope('evt-4a', 'entity-4', 1), work());

    const lines = said.mock.calls.map((call) => [...call]);
    said.mockRestore();
    expect(older).toBe('stale');
    expect(lines).toContainEqual([
      expect.stringContaining('Stale event acknowledged without effect'),
      expect.objectContaining({ eventId: 'evt-4a', version: 1, entitySeq: 2, entityLastEventId: 'evt-4b' }),
    ]);
    expect(await p.item('entity-4')).toMatchObject({ appliedCount: 1, seq: 2, seqEventId: 'evt-4b' });
    expect(p.calls).toEqual([`${p.consumer}:evt-4b`]);
  });

  test('two versions of one entity in order both apply and both reach the provider', async () => {
    const p = parts();

    const outcomes = [
      await p.apply(envelope('evt-5a', 'entity-5', 1)),
      await p.apply(envelope('evt-5b', 'entity-5', 2)),
    ];

    expect(outcomes).toEqual(['applied', 'applied']);
    expect(await p.item('entity-5')).toMatchObject({ appliedCount: 2, seq: 2 });
    expect(p.calls).toEqual([`${p.consumer}:evt-5a`, `${p.consumer}:evt-5b`]);
  });

  test('a provider failure leaves the call owed on the item: the retry makes it once, the count stays 1', async () => {
    const p = parts();
    const event = envelope('evt-6', 'entity-6');
    p.state.down = true;
    await expect(p.apply(event, work())).rejects.toThrow('provider down');
    expect(await p.item('entity-6')).toHaveProperty(['owedCall#evt-6']);
    p.state.down = false;

    const retried = await p.apply(event, work());
    const again = await p.apply(event, work());

    expect([retried, again]).toEqual(['duplicate', 'duplicate']);
    expect(p.performed.map((c) => c.key)).toEqual([`${p.consumer}:evt-6`]);
    expect(await p.item('entity-6')).not.toHaveProperty(['owedCall#evt-6']);
    expect(await p.item('entity-6')).toMatchObject({ appliedCount: 1 });
  });

  test("a copy that owes the call while another try holds the call's lease does not call: ProviderCallInProgress", async () => {
    const p = parts();
    const event = envelope('evt-7', 'entity-7');
    const firstTry = work();
    // The first try committed and is calling: its claim took the lease. Its call has not returned.
    await p.ledger.apply(event, firstTry);

    const copy = p.apply(event, work());

    await expect(copy).rejects.toBeInstanceOf(ProviderCallInProgress);
    expect(p.calls).toEqual([]);
  });

  test('a lease given back after a failed call is free for the next try at once', async () => {
    const p = parts();
    const event = envelope('evt-7b', 'entity-7b');
    p.state.down = true;
    await expect(p.apply(event, work())).rejects.toThrow('provider down');
    p.state.down = false;

    const next = await p.apply(event, work());

    expect(next).toBe('duplicate');
    expect(p.calls).toEqual([`${p.consumer}:evt-7b`]);
  });

  test("an owed call found past the provider's key window is ProviderKeyWindowPassed, never called", async () => {
    const claimedAt = Date.now();
    const failing = parts({ now: () => new Date(claimedAt) });
    const event = envelope('evt-8', 'entity-8');
    failing.state.down = true;
    await expect(failing.apply(event, work())).rejects.toThrow('provider down');
    const aDayLater = new DynamoDbSequencedEntityEffectLedger(backend.documents(), {
      consumer: failing.consumer,
      tableName: backend.tableName(),
      now: () => new Date(claimedAt + 86_400_000),
    });
    failing.state.down = false;

    const redelivered = applyEntityEffect(event, { ...failing.deps, ledger: aDayLater }, work());

    await expect(redelivered).rejects.toMatchObject({ permanentCause: 'ProviderKeyWindowPassed' });
    expect(failing.calls).toEqual([]);
    expect(await failing.item('entity-8')).toHaveProperty(['owedCall#evt-8']);
  });

  describe('a person who checked at the provider settles an owed call past its window (the DLQ tool)', () => {
    /** The event's call failed at its claim, and was refused a day later: owed past the window. */
    async function refusedADayLater(eventId: string, entityId: string) {
      const claimedAt = Date.now();
      const p = parts({ now: () => new Date(claimedAt) });
      const event = envelope(eventId, entityId);
      p.state.down = true;
      await expect(p.apply(event, work())).rejects.toThrow('provider down');
      p.state.down = false;
      const aDayLater = () => new Date(claimedAt + 86_400_000);
      const later = new DynamoDbSequencedEntityEffectLedger(backend.documents(), {
        consumer: p.consumer,
        tableName: backend.tableName(),
        now: aDayLater,
      });
      const redeliver = () => applyEntityEffect(event, { ...p.deps, ledger: later }, work());
      await expect(redeliver()).rejects.toMatchObject({ permanentCause: 'ProviderKeyWindowPassed' });
      const where = { table: backend.tableName(), consumer: p.consumer, eventId, entityId };
      return { p, aDayLater, redeliver, where };
    }

    test('found NOT performed: the window restarts, and the redelivered event calls the provider once', async () => {
      const { p, aDayLater, redeliver, where } = await refusedADayLater('evt-16', 'entity-16');
      await recordSequencedProviderCallFinding(backend.raw(), where, 'not-performed', aDayLater());

      const outcomes = [await redeliver(), await redeliver()];

      expect(outcomes).toEqual(['duplicate', 'duplicate']);
      expect(p.calls).toEqual([`${p.consumer}:evt-16`]);
      expect(await p.item('entity-16')).toMatchObject({ appliedCount: 1 });
    });

    test('found performed: the call is recorded done, and the redelivered event calls nothing', async () => {
      const { p, aDayLater, redeliver, where } = await refusedADayLater('evt-17', 'entity-17');
      await recordSequencedProviderCallFinding(backend.raw(), where, 'performed', aDayLater());

      const outcome = await redeliver();

      expect(outcome).toBe('duplicate');
      expect(p.calls).toEqual([]);
      expect(await p.item('entity-17')).not.toHaveProperty(['owedCall#evt-17']);
    });

    test('an event whose entity item owes no call for it is refused, and nothing is written', async () => {
      const p = parts();
      await p.apply(envelope('evt-18', 'entity-18'), work());
      const before = await p.item('entity-18');
      const where = { table: backend.tableName(), consumer: p.consumer, eventId: 'evt-18', entityId: 'entity-18' };

      const recorded = recordSequencedProviderCallFinding(backend.raw(), where, 'not-performed', new Date());

      await expect(recorded).rejects.toThrow('owes no call for it');
      expect(await p.item('entity-18')).toEqual(before);
    });
  });

  test("a retry of a claim whose answer was lost finds the try's own lease holder: reported applied, counted once", async () => {
    const p = parts();
    const event = envelope('evt-9', 'entity-9');
    const sameTry = work();
    await p.ledger.apply(event, sameTry); // committed; its answer lost

    const retried = await p.ledger.apply(event, sameTry);

    expect(retried.outcome).toBe('applied');
    expect(await p.item('entity-9')).toMatchObject({ appliedCount: 1 });
  });

  test('a consumer switched from the transactional generic effect never applies again what it applied: a copy is a duplicate, an older one stale, a newer one counts', async () => {
    const p = parts();
    const before = new DynamoDbEntityEffectLedger(backend.documents(), {
      consumer: p.consumer,
      tableName: backend.tableName(),
      inboxTtlSeconds: 3600,
    });
    await applyEntityEffect(envelope('evt-19b', 'entity-19', 2), { ...p.deps, ledger: before }, work());
    p.calls.length = 0;

    const outcomes = [
      await p.apply(envelope('evt-19b', 'entity-19', 2), work()),
      await p.apply(envelope('evt-19a', 'entity-19', 1), work()),
      await p.apply(envelope('evt-19c', 'entity-19', 3), work()),
    ];

    expect(outcomes).toEqual(['duplicate', 'stale', 'applied']);
    expect(await p.item('entity-19')).toMatchObject({ appliedCount: 2, seq: 3, lastVersion: 3 });
    expect(p.calls).toEqual([`${p.consumer}:evt-19c`]);
  });

  describe('the dead-lettered head v, then v+1 applied, then a redrive of v', () => {
    test('v never applied (its write failed until it was dead-lettered): the redrive is stale, no effect, no call', async () => {
      const p = parts();
      const [v, next] = [envelope('evt-10a', 'entity-10', 1), envelope('evt-10b', 'entity-10', 2)];
      await p.apply(next, work());

      const redriven = await p.apply(v, work());

      expect(redriven).toBe('stale');
      expect(await p.item('entity-10')).toMatchObject({ appliedCount: 1, seq: 2, seqEventId: 'evt-10b' });
      expect(p.calls).toEqual([`${p.consumer}:evt-10b`]);
    });

    test('v applied, its call owed when it was dead-lettered: the redrive makes the owed call once, applies nothing again', async () => {
      const p = parts();
      const [v, next] = [envelope('evt-11a', 'entity-11', 1), envelope('evt-11b', 'entity-11', 2)];
      p.state.down = true;
      await expect(p.apply(v, work())).rejects.toThrow('provider down');
      p.state.down = false;
      await p.apply(next, work());

      const redriven = await p.apply(v, work());
      const again = await p.apply(v, work());

      expect([redriven, again]).toEqual(['duplicate', 'stale']);
      expect(await p.item('entity-11')).toMatchObject({ appliedCount: 2, seq: 2 });
      expect(p.performed.map((c) => c.key)).toEqual([`${p.consumer}:evt-11b`, `${p.consumer}:evt-11a`]);
    });

    test('where a newer event supersedes the owed call (a cancel and its PICK): the redrive of v is stale, its call never made', async () => {
      const consumer = `seq-${(consumers += 1)}`;
      const ledger = new SupersedingLedger(backend.documents(), { consumer, tableName: backend.tableName() });
      const calls: string[] = [];
      let down = true;
      const send = (_signal: AbortSignal | undefined, key: string) => {
        if (down) return Promise.reject(new Error('provider down'));
        calls.push(key);
        return Promise.resolve();
      };
      const v = envelope('evt-12a', 'entity-12', 1);
      const cancel = { ...envelope('evt-12b', 'entity-12', 2), type: 'ThingUndone' };
      const first = work();
      await expect(callProviderIfOwed(await ledger.apply(v, first), v, ledger, send, first)).rejects.toThrow();
      down = false;
      const second = work();
      await callProviderIfOwed(await ledger.apply(cancel, second), cancel, ledger, send, second);

      const redrive = work();
      const redriven = await callProviderIfOwed(await ledger.apply(v, redrive), v, ledger, send, redrive);

      expect(redriven).toBe('stale');
      expect(calls).toEqual([providerKey(consumer, cancel)]);
    });
  });

  test("a newer event refused by the effect's own condition on its entity is EntityConditionFailed with the item: nothing written", async () => {
    const consumer = `seq-${(consumers += 1)}`;
    const ledger = new SupersedingLedger(backend.documents(), { consumer, tableName: backend.tableName() });
    await ledger.apply(envelope('evt-15a', 'entity-15', 1));
    const key = sequencedEntityKey(consumer, { entityId: 'entity-15' });
    const before = (
      await backend.documents().send(new GetCommand({ TableName: backend.tableName(), Key: key, ConsistentRead: true }))
    ).Item;

    const refused = ledger.apply(envelope('evt-15b', 'entity-15', 2), work(), 'SomethingElse');

    await expect(refused).rejects.toBeInstanceOf(EntityConditionFailed);
    await expect(refused).rejects.toMatchObject({ oldItem: { state: 'ThingHappened', seq: 1 } });
    expect(
      (
        await backend
          .documents()
          .send(new GetCommand({ TableName: backend.tableName(), Key: key, ConsistentRead: true }))
      ).Item,
    ).toEqual(before);
  });

  describe('an effect on its entity and on other items (one transaction, the claim first)', () => {
    function stock() {
      const consumer = `seq-${(consumers += 1)}`;
      const ledger = new StockLedger(backend.documents(), { consumer, tableName: backend.tableName() });
      const calls: string[] = [];
      const send = (_signal: AbortSignal | undefined, key: string) => {
        calls.push(key);
        return Promise.resolve();
      };
      const get = async (key: { pk: string; sk: string }) =>
        (
          await backend
            .documents()
            .send(new GetCommand({ TableName: backend.tableName(), Key: key, ConsistentRead: true }))
        ).Item;
      const place = envelope('place', 'order-1', 1);
      const cancel = { ...envelope('cancel', 'order-1', 2), type: 'ThingUndone' };
      const run = async (event: EventEnvelope, apply: (w: RecordWork) => Promise<LedgerResult>) => {
        const w = work();
        return callProviderIfOwed(await apply(w), event, ledger, send, w);
      };
      return {
        consumer,
        ledger,
        calls,
        place,
        cancel,
        placed: () => run(place, (w) => ledger.place(place, w)),
        cancelled: () => run(cancel, (w) => ledger.cancel(cancel, w)),
        stockReserved: async () => (await get(ledger.stockKey()))?.reserved,
        order: () => get(sequencedEntityKey(consumer, place)),
      };
    }

    test('the same place twice reserves once and calls once', async () => {
      const s = stock();

      const outcomes = [await s.placed(), await s.placed()];

      expect(outcomes).toEqual(['applied', 'duplicate']);
      expect(await s.stockReserved()).toBe(1);
      expect(s.calls).toEqual([providerKey(s.consumer, s.place)]);
    });

    test('place, cancel, then a redrive of the place: released once, the redrive stale, no call after the cancel', async () => {
      const s = stock();
      await s.placed();
      await s.cancelled();

      const redriven = await s.placed();

      expect(redriven).toBe('stale');
      expect(await s.stockReserved()).toBe(0);
      expect(await s.order()).toMatchObject({ state: 'RELEASED', seq: 2 });
      expect(s.calls).toEqual([providerKey(s.consumer, s.place), providerKey(s.consumer, s.cancel)]);
    });

    test("a cancel that overtook its place releases nothing (the effect's condition on the entity), and the late place is stale", async () => {
      const s = stock();

      const outcomes = [await s.cancelled(), await s.placed()];

      expect(outcomes).toEqual(['applied', 'stale']);
      expect(await s.stockReserved()).toBeUndefined();
      expect(await s.order()).toMatchObject({ state: 'CANCELLED_UNPLACED', seq: 2 });
      expect(s.calls).toEqual([providerKey(s.consumer, s.cancel)]);
    });

    test("another item's failed condition is EffectConditionFailed with its index and old item: nothing written", async () => {
      const s = stock();
      await s.placed(); // the STOCK item now exists

      const refused = s.ledger.place(
        { ...s.place, eventId: 'place-2', entityId: 'order-2' },
        work(),
        'attribute_not_exists(pk)',
      );

      await expect(refused).rejects.toBeInstanceOf(EffectConditionFailed);
      await expect(refused).rejects.toMatchObject({ effectIndex: 0, oldItem: { reserved: 1 } });
      expect(await s.stockReserved()).toBe(1);
      expect(
        (
          await backend.documents().send(
            new GetCommand({
              TableName: backend.tableName(),
              Key: sequencedEntityKey(s.consumer, { entityId: 'order-2' }),
              ConsistentRead: true,
            }),
          )
        ).Item,
      ).toBeUndefined();
    });
  });

  test('two tenants whose events share an entity id and an eventId are two entities: each applied once, two keys', async () => {
    const p = parts();
    const ofA = { ...envelope('evt-13', 'entity-13'), tenant: 'arn:aws:iam::111111111111:role/A' };
    const ofB = { ...envelope('evt-13', 'entity-13'), tenant: 'arn:aws:iam::222222222222:role/B' };

    const outcomes = [await p.apply(ofA, work()), await p.apply(ofB, work()), await p.apply(ofA, work())];

    expect(outcomes).toEqual(['applied', 'applied', 'duplicate']);
    expect(await p.item('entity-13', ofA.tenant)).toMatchObject({ appliedCount: 1, tenant: ofA.tenant });
    expect(await p.item('entity-13', ofB.tenant)).toMatchObject({ appliedCount: 1, tenant: ofB.tenant });
    expect(p.calls).toEqual([providerKey(p.consumer, ofA), providerKey(p.consumer, ofB)]);
  });

  if (backend.enforcesKeySize)
    test('a write DynamoDB refuses as invalid (a key over 2 KB) is WriteRejected, permanent: nothing written', async () => {
      const p = parts();

      const applied = p.apply(envelope('evt-14', 'e'.repeat(3_000)), work());

      await expect(applied).rejects.toMatchObject({ name: 'PermanentError', permanentCause: 'WriteRejected' });
      expect(await p.itemsOfConsumer()).toEqual([]);
      expect(p.calls).toEqual([]);
    });
}

/** A record's work as a consumer gives it: a deadline signal, a lease for this try. */
export function work(signal = new AbortController().signal): RecordWork {
  return {
    signal,
    deadline: Date.now() + 10_000,
    leaseUntil: Date.now() + 20_000,
    leaseHolder: `test:${Math.random()}`,
  };
}
