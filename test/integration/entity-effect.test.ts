import { TransactionInProgressException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { DynamoDbEntityEffectLedger } from '@exactly-once/runtime/aws/entity-effect-ledger';
import { entityEffectKey, inboxKey } from '@exactly-once/runtime/aws/inbox-table';
import { isContention } from '@exactly-once/runtime/aws/transient-errors';
import { IN_PROCESS_RETRY } from '@exactly-once/runtime/runtime/contention-retry';
import { parseWith, type EventEnvelope } from '@exactly-once/runtime/envelope';
import type { RecordWork } from '@exactly-once/runtime/consumer/record-work';
import type { ExternalProvider } from '@exactly-once/runtime/provider/provider';
import { applyEntityEffect } from '@exactly-once/runtime/inbox/entity-effect';
import { testDynamoDbClient } from '../support/emulated-dynamodb';
import { useEmulatedEffects, type EmulatedEffects } from '../support/emulated-effects';
import { stripeLikeProvider } from '../support/providers';
import { recordProviderCallFinding, type ProviderCallFinding } from '@exactly-once/tools/dlq/provider-window';
import { providerKey } from '@exactly-once/runtime/inbox/keys';

/**
 * The generic effect of a consumer made by `npm run new:consumer`, on DynamoDB
 * Local with the Effects table of the mechanism's construct: the inbox claim and the count commit
 * together, a duplicate is recognised by the claim's condition alone, and the
 * provider hears of an event until its call is recorded done.
 */

const CONSUMER = 'audit';
let documents: DynamoDBDocumentClient;
let raw: EmulatedEffects['raw'];
let effectsTable: string;
useEmulatedEffects((db) => ({ documents, raw, effectsTable } = db));

const envelope = (eventId: string, entityId: string, type = 'ThingHappened'): EventEnvelope => ({
  eventId,
  type,
  entityId,
  version: 1,
  occurredAt: new Date(Date.now() - 60_000).toISOString(),
  payload: {},
});

/** The generic effect's parts on the Effects table, with a Stripe-like provider (down with `failProvider`). */
function parts(failProvider = false, now?: () => Date) {
  const { provider, calls, performed, state } = stripeLikeProvider();
  state.down = failProvider;
  const ledger = new DynamoDbEntityEffectLedger(documents, {
    consumer: CONSUMER,
    tableName: effectsTable,
    inboxTtlSeconds: 3600,
    now,
  });
  return { calls, performed, deps: { consumer: CONSUMER, eventTypes: ['ThingHappened'], ledger, provider } };
}

const get = async (key: { pk: string; sk: string }) =>
  (await documents.send(new GetCommand({ TableName: effectsTable, Key: key, ConsistentRead: true }))).Item;

test('the same event applied twice counts once and calls the provider once', async () => {
  const { calls, deps } = parts();
  const event = envelope('evt-1', 'entity-1');

  const outcomes = [await applyEntityEffect(event, deps), await applyEntityEffect(event, deps)];

  expect(outcomes).toEqual(['applied', 'duplicate']);
  expect(await get(entityEffectKey(CONSUMER, 'entity-1'))).toMatchObject({ appliedCount: 1, lastEventId: 'evt-1' });
  expect(calls).toEqual(['audit:evt-1']);
  expect(await get(inboxKey(CONSUMER, 'evt-1'))).toMatchObject({ providerCallDoneAt: expect.any(String) });
});

test('two versions of one entity both count', async () => {
  const { deps } = parts();

  await applyEntityEffect(envelope('evt-2a', 'entity-2'), deps);
  await applyEntityEffect({ ...envelope('evt-2b', 'entity-2'), version: 2 }, deps);

  expect(await get(entityEffectKey(CONSUMER, 'entity-2'))).toMatchObject({ appliedCount: 2, lastEventId: 'evt-2b' });
});

test('a provider failure leaves the call owed: the duplicate calls it, and the count stays 1', async () => {
  const failing = parts(true);
  const event = envelope('evt-3', 'entity-3');
  await expect(applyEntityEffect(event, failing.deps)).rejects.toThrow('provider down');
  const { calls, deps } = parts();

  const outcome = await applyEntityEffect(event, deps);

  expect(outcome).toBe('duplicate');
  expect(calls).toEqual(['audit:evt-3']);
  expect(await get(entityEffectKey(CONSUMER, 'entity-3'))).toMatchObject({ appliedCount: 1 });
});

test('a type the consumer does not take is refused as UnsupportedEventType and writes nothing', async () => {
  const { calls, deps } = parts();

  await expect(applyEntityEffect(envelope('evt-4', 'entity-4', 'ThingUndone'), deps)).rejects.toMatchObject({
    name: 'PermanentError',
    permanentCause: 'UnsupportedEventType',
  });

  expect(await get(inboxKey(CONSUMER, 'evt-4'))).toBeUndefined();
  expect(await get(entityEffectKey(CONSUMER, 'entity-4'))).toBeUndefined();
  expect(calls).toEqual([]);
});

describe('a provider request the consumer shapes from the event (providerRequest)', () => {
  /** A billing call needs the amount, which only the event's payload has. */
  const billingRequest = (event: EventEnvelope) => ({
    orderId: event.entityId,
    amountCents: parseWith(z.object({ totalCents: z.int().min(1) }), event.payload, 'a billed order').totalCents,
  });

  function shaping() {
    const sent: { key: string; payload: Record<string, unknown> }[] = [];
    const provider: ExternalProvider = { send: async (key, payload) => void sent.push({ key, payload }) };
    const { deps } = parts();
    return { sent, deps: { ...deps, provider, providerRequest: billingRequest } };
  }

  test('the provider receives it under <consumer>:<eventId>, and the event counts once', async () => {
    const { sent, deps } = shaping();
    const event = { ...envelope('evt-14', 'entity-14'), payload: { totalCents: 4200 } };

    const outcomes = [await applyEntityEffect(event, deps), await applyEntityEffect(event, deps)];

    expect(outcomes).toEqual(['applied', 'duplicate']);
    expect(sent).toEqual([{ key: 'audit:evt-14', payload: { orderId: 'entity-14', amountCents: 4200 } }]);
    expect(await get(entityEffectKey(CONSUMER, 'entity-14'))).toMatchObject({ appliedCount: 1 });
  });

  test('a payload it cannot be shaped from is a SchemaViolation, and nothing is written', async () => {
    const { sent, deps } = shaping();
    const event = { ...envelope('evt-15', 'entity-15'), payload: { totalCents: 'a lot' } };

    await expect(applyEntityEffect(event, deps)).rejects.toMatchObject({ permanentCause: 'SchemaViolation' });

    expect(await get(inboxKey(CONSUMER, 'evt-15'))).toBeUndefined();
    expect(await get(entityEffectKey(CONSUMER, 'entity-15'))).toBeUndefined();
    expect(sent).toEqual([]);
  });
});

test("an owed call found by a duplicate a day after its claim, past the provider's key window: dead-lettered, not called", async () => {
  const claimedAt = Date.now();
  const failing = parts(true, () => new Date(claimedAt));
  const event = envelope('evt-4', 'entity-4');
  await expect(applyEntityEffect(event, failing.deps)).rejects.toThrow('provider down');
  const aDayLater = parts(false, () => new Date(claimedAt + 86_400_000));

  const redelivered = applyEntityEffect(event, aDayLater.deps);

  await expect(redelivered).rejects.toMatchObject({ permanentCause: 'ProviderKeyWindowPassed' });
  expect(aDayLater.calls).toEqual([]);
  expect(await get(inboxKey(CONSUMER, 'evt-4'))).not.toHaveProperty('providerCallDoneAt');
  expect(await get(entityEffectKey(CONSUMER, 'entity-4'))).toMatchObject({ appliedCount: 1 });
});

describe('a person who checked at the provider settles an owed call past its window (the DLQ tool)', () => {
  async function refusedADayLater(eventId: string, entityId: string) {
    const claimedAt = Date.now();
    await expect(
      applyEntityEffect(envelope(eventId, entityId), parts(true, () => new Date(claimedAt)).deps),
    ).rejects.toThrow('provider down');
    const aDayLater = () => new Date(claimedAt + 86_400_000);
    await expect(applyEntityEffect(envelope(eventId, entityId), parts(false, aDayLater).deps)).rejects.toMatchObject({
      permanentCause: 'ProviderKeyWindowPassed',
    });
    return aDayLater;
  }

  /** Refused a day after its claim, then a person's finding at the provider recorded by the DLQ tool. */
  async function refusedThenFound(eventId: string, entityId: string, finding: ProviderCallFinding) {
    const aDayLater = await refusedADayLater(eventId, entityId);
    await recordProviderCallFinding(raw, { table: effectsTable, consumer: CONSUMER, eventId }, finding, aDayLater());
    return aDayLater;
  }

  test('found NOT performed: the key window restarts, and the redelivered event calls the provider once', async () => {
    const aDayLater = await refusedThenFound('evt-5', 'entity-5', 'not-performed');
    const redelivery = parts(false, aDayLater);

    const outcome = await applyEntityEffect(envelope('evt-5', 'entity-5'), redelivery.deps);

    expect(outcome).toBe('duplicate');
    expect(redelivery.calls).toEqual(['audit:evt-5']);
    expect(await get(entityEffectKey(CONSUMER, 'entity-5'))).toMatchObject({ appliedCount: 1 });
  });

  test('found performed: the call is recorded done, and the redelivered event calls nothing', async () => {
    const aDayLater = await refusedThenFound('evt-6', 'entity-6', 'performed');
    const redelivery = parts(false, aDayLater);

    const outcome = await applyEntityEffect(envelope('evt-6', 'entity-6'), redelivery.deps);

    expect(outcome).toBe('duplicate');
    expect(redelivery.calls).toEqual([]);
  });

  test('an event with no owed call is refused, and nothing is written', async () => {
    const where = { table: effectsTable, consumer: CONSUMER, eventId: 'evt-never' };

    const recorded = recordProviderCallFinding(raw, where, 'not-performed', new Date());

    await expect(recorded).rejects.toThrow('audit evt-never: no inbox entry owes this call');
    expect(await get(inboxKey(CONSUMER, 'evt-never'))).toBeUndefined();
  });
});

describe('event integrity on DynamoDB Local', () => {
  test('another event under a used eventId is refused as EventIdReused: the count and the claim stay as they were', async () => {
    const { calls, deps } = parts();
    const first = envelope('evt-7', 'entity-7');
    await applyEntityEffect(first, deps);
    const claim = await get(inboxKey(CONSUMER, 'evt-7'));

    const reused = applyEntityEffect({ ...first, payload: { forged: true } }, deps);

    await expect(reused).rejects.toMatchObject({
      permanentCause: 'EventIdReused',
      details: { storedFingerprint: claim?.fingerprint, deliveredFingerprint: expect.any(String) },
    });
    expect(await get(entityEffectKey(CONSUMER, 'entity-7'))).toMatchObject({ appliedCount: 1 });
    expect(await get(inboxKey(CONSUMER, 'evt-7'))).toEqual(claim);
    expect(calls).toEqual(['audit:evt-7']);
  });

  /**
   * A client whose first TransactWriteItems answer is lost after DynamoDB committed it, so the SDK
   * retries the same request; `withoutToken` also strips the request's ClientRequestToken. With
   * `inProgress`, the answer is TransactionInProgressException instead (what a retry meets while the
   * first request still runs), and the ledger retries it in-process as the consumers' wiring does.
   */
  function lossyLedger(withoutToken = false, inProgress = false) {
    const client = testDynamoDbClient();
    const lost = { answers: 0 };
    /** The first transaction's answer, once DynamoDB committed it: lost, or in progress. */
    const replaced = (commandName: string | undefined) => {
      if (commandName !== 'TransactWriteItemsCommand' || lost.answers > 0) return;
      lost.answers += 1;
      if (inProgress)
        throw new TransactionInProgressException({ message: 'Transaction is in progress', $metadata: {} });
      throw Object.assign(new Error('socket hang up after the commit'), { name: 'TimeoutError', $metadata: {} });
    };
    if (inProgress)
      // Past the SDK's own retries (it retries an in-progress answer under the same token by itself), so
      // the ledger's in-process retry is what meets it: replaced outside the retry step.
      client.middlewareStack.add(
        (next, context) => async (args) => {
          const result = await next(args);
          replaced(context.commandName);
          return result;
        },
        { step: 'initialize', name: 'answerInProgress' },
      );
    else
      client.middlewareStack.add(
        (next, context) => async (args) => {
          const result = await next(args);
          replaced(context.commandName);
          return result;
        },
        { step: 'deserialize', name: 'loseTheFirstAnswer' },
      );
    if (withoutToken)
      client.middlewareStack.add(
        (next) => async (args) => {
          const request = args.request as { body?: unknown; headers: Record<string, string> };
          // A Uint8Array (the SDK's JSON body), read as bytes: its string methods are deprecated.
          const body = request.body;
          const text =
            typeof body === 'string'
              ? body
              : body instanceof Uint8Array
                ? new TextDecoder().decode(new Uint8Array(body.buffer, body.byteOffset, body.byteLength))
                : '';
          if (text.includes('ClientRequestToken')) {
            const { ClientRequestToken: _token, ...rest } = JSON.parse(text) as Record<string, unknown>;
            request.body = JSON.stringify(rest);
            request.headers['content-length'] = String(Buffer.byteLength(request.body as string));
          }
          return next(args);
        },
        { step: 'finalizeRequest', name: 'stripToken', priority: 'low' },
      );
    const ledger = new DynamoDbEntityEffectLedger(DynamoDBDocumentClient.from(client), {
      consumer: CONSUMER,
      tableName: effectsTable,
      inboxTtlSeconds: 3600,
      contention: { ...IN_PROCESS_RETRY, isContention, sleep: async () => undefined },
    });
    return { ledger, lost, destroy: () => client.destroy() };
  }

  test("the SDK's retry of a transaction that committed (its answer lost) is reported applied, not duplicate", async () => {
    const lossy = lossyLedger();

    const result = await lossy.ledger.apply(envelope('evt-8', 'entity-8'), work());

    expect(lossy.lost.answers).toBe(1);
    expect(result.outcome).toBe('applied');
    expect(await get(entityEffectKey(CONSUMER, 'entity-8'))).toMatchObject({ appliedCount: 1 });
    lossy.destroy();
  });

  test('TransactionInProgressException after the commit, retried in-process under the same token: reported applied, counted once', async () => {
    const lossy = lossyLedger(false, true);

    const result = await lossy.ledger.apply(envelope('evt-8d', 'entity-8d'));

    expect(lossy.lost.answers).toBe(1);
    expect(result.outcome).toBe('applied');
    expect(await get(entityEffectKey(CONSUMER, 'entity-8d'))).toMatchObject({ appliedCount: 1 });
    lossy.destroy();
  });

  test('the same retry without a ClientRequestToken, from a ledger called without a record (no lease holder on its claim), fails on its own claim and is miscounted a duplicate: the token is what closes it', async () => {
    const lossy = lossyLedger(true);

    const result = await lossy.ledger.apply(envelope('evt-8b', 'entity-8b'));

    expect(lossy.lost.answers).toBe(1);
    expect(result.outcome).toBe('duplicate');
    expect(await get(entityEffectKey(CONSUMER, 'entity-8b'))).toMatchObject({ appliedCount: 1 });
    lossy.destroy();
  });

  test("the same retry without a ClientRequestToken in a record's try: the claim it fails on holds the try's own lease holder, so it is reported applied", async () => {
    const lossy = lossyLedger(true);

    const result = await lossy.ledger.apply(envelope('evt-8c', 'entity-8c'), work());

    expect(lossy.lost.answers).toBe(1);
    expect(result.outcome).toBe('applied');
    expect(await get(entityEffectKey(CONSUMER, 'entity-8c'))).toMatchObject({ appliedCount: 1 });
    lossy.destroy();
  });

  test("a provider's 2xx that lands as the record's deadline fires is still recorded done: the next copy calls nothing", async () => {
    const deadline = new AbortController();
    const calls: string[] = [];
    const { deps } = parts();
    const answeredAtTheDeadline: ExternalProvider = {
      send: async (key) => {
        calls.push(key);
        deadline.abort(new Error('the record deadline'));
      },
    };
    const event = envelope('evt-9', 'entity-9');

    await applyEntityEffect(event, { ...deps, provider: answeredAtTheDeadline }, work(deadline.signal));
    const again = await applyEntityEffect(event, { ...deps, provider: answeredAtTheDeadline }, work());

    expect(await get(inboxKey(CONSUMER, 'evt-9'))).toMatchObject({ providerCallDoneAt: expect.any(String) });
    expect(again).toBe('duplicate');
    expect(calls).toEqual(['audit:evt-9']);
  });

  test('an older version after a newer one is stale on DynamoDB Local: not counted', async () => {
    const { calls, deps } = parts();

    await applyEntityEffect({ ...envelope('evt-10b', 'entity-10'), version: 2 }, deps);
    const older = await applyEntityEffect({ ...envelope('evt-10a', 'entity-10'), version: 1 }, deps);

    expect(older).toBe('stale');
    expect(await get(entityEffectKey(CONSUMER, 'entity-10'))).toMatchObject({ appliedCount: 1, lastVersion: 2 });
    expect(calls).toEqual(['audit:evt-10b']);
  });

  test('a stale event leaves its entry marked superseded by the entity last event: judged, not lost, and a copy of it calls nothing', async () => {
    const { calls, deps } = parts();
    await applyEntityEffect({ ...envelope('evt-16b', 'entity-16'), version: 2 }, deps);

    const older = await applyEntityEffect({ ...envelope('evt-16a', 'entity-16'), version: 1 }, deps);
    const copy = await applyEntityEffect({ ...envelope('evt-16a', 'entity-16'), version: 1 }, deps);

    expect([older, copy]).toEqual(['stale', 'stale']);
    expect(await get(inboxKey(CONSUMER, 'evt-16a'))).toEqual({
      ...inboxKey(CONSUMER, 'evt-16a'),
      supersededBy: 'evt-16b',
      supersededByEntityId: 'entity-16',
      supersededByVersion: 2,
      expiresAt: expect.any(Number),
    });
    expect(await get(entityEffectKey(CONSUMER, 'entity-16'))).toMatchObject({ appliedCount: 1, lastVersion: 2 });
    expect(calls).toEqual(['audit:evt-16b']);
  });

  test.each([
    ['another entity', 'x', { entity: 'other', version: 1 }],
    ['its entity at a version above the mark', 'y', { entity: 'same', version: 3 }],
  ])(
    'a later event under an id a supersede mark took (%s) is EventIdReused, not a duplicate: nothing written, no call',
    async (_, run, reuse) => {
      const { calls, deps } = parts();
      const [newer, older, entity] = [`evt-19b${run}`, `evt-19a${run}`, `entity-19${run}`];
      await applyEntityEffect({ ...envelope(newer, entity), version: 2 }, deps);
      await applyEntityEffect({ ...envelope(older, entity), version: 1 }, deps); // stale: its mark takes the id
      const mark = await get(inboxKey(CONSUMER, older));
      const reusedEntity = reuse.entity === 'same' ? entity : `${entity}-other`;
      const before = await get(entityEffectKey(CONSUMER, reusedEntity));

      const applied = applyEntityEffect({ ...envelope(older, reusedEntity), version: reuse.version }, deps);

      await expect(applied).rejects.toMatchObject({ permanentCause: 'EventIdReused' });
      expect(await get(inboxKey(CONSUMER, older))).toEqual(mark);
      expect(await get(entityEffectKey(CONSUMER, reusedEntity))).toEqual(before);
      expect(calls).toEqual([`audit:${newer}`]);
    },
  );

  test('a write DynamoDB Local refuses as invalid (a key over 2 KB) is WriteRejected, permanent', async () => {
    const { calls, deps } = parts();

    const applied = applyEntityEffect(envelope('evt-11', 'e'.repeat(3_000)), deps);

    await expect(applied).rejects.toMatchObject({ name: 'PermanentError', permanentCause: 'WriteRejected' });
    expect(await get(inboxKey(CONSUMER, 'evt-11'))).toBeUndefined();
    expect(calls).toEqual([]);
  });
});

/** A record's work as a consumer gives it: a deadline signal, a lease for this try. */
function work(signal = new AbortController().signal): RecordWork {
  return {
    signal,
    deadline: Date.now() + 10_000,
    leaseUntil: Date.now() + 20_000,
    leaseHolder: `test:${Math.random()}`,
  };
}

describe('a verified tenant is part of the inbox key', () => {
  test('two tenants whose producers use the same eventId are two events: each applied once, each call recorded on its own entry', async () => {
    const { calls, deps } = parts();
    const ofA = { ...envelope('evt-12', 'entity-12'), tenant: 'arn:aws:iam::111111111111:role/A' };
    const ofB = { ...envelope('evt-12', 'entity-12b'), tenant: 'arn:aws:iam::222222222222:role/B' };

    const outcomes = [
      await applyEntityEffect(ofA, deps),
      await applyEntityEffect(ofB, deps),
      await applyEntityEffect(ofA, deps),
    ];

    expect(outcomes).toEqual(['applied', 'applied', 'duplicate']);
    expect(await get(entityEffectKey(CONSUMER, 'entity-12'))).toMatchObject({ appliedCount: 1 });
    expect(await get(entityEffectKey(CONSUMER, 'entity-12b'))).toMatchObject({ appliedCount: 1 });
    for (const tenant of [ofA.tenant, ofB.tenant])
      expect(await get(inboxKey(CONSUMER, 'evt-12', tenant))).toMatchObject({
        tenant,
        providerCallDoneAt: expect.any(String),
      });
    expect(await get(inboxKey(CONSUMER, 'evt-12'))).toBeUndefined();
    expect(calls).toEqual([providerKey(CONSUMER, ofA), providerKey(CONSUMER, ofB)]);
  });

  test('their provider calls carry two keys: two effects at a key-honouring provider, neither refused', async () => {
    const { calls, performed, deps } = parts();
    // A billing call that sends only the amount: under one key the second tenant's would get the first's reply.
    const sameBody = { ...deps, providerRequest: () => ({ amountCents: 500 }) };
    const ofA = { ...envelope('evt-17', 'entity-17'), tenant: 'arn:aws:iam::111111111111:role/A' };
    const ofB = { ...envelope('evt-17', 'entity-17b'), tenant: 'arn:aws:iam::222222222222:role/B' };
    const ofC = { ...envelope('evt-18', 'entity-18'), tenant: 'arn:aws:iam::111111111111:role/A' };
    const ofD = { ...envelope('evt-18', 'entity-18b'), tenant: 'arn:aws:iam::222222222222:role/B' };

    const outcomes = [
      await applyEntityEffect(ofA, sameBody),
      await applyEntityEffect(ofB, sameBody),
      await applyEntityEffect(ofC, deps),
      await applyEntityEffect(ofD, deps),
    ];

    expect(outcomes).toEqual(['applied', 'applied', 'applied', 'applied']);
    expect(new Set(calls).size).toBe(4);
    expect(performed).toHaveLength(4);
    expect(await get(inboxKey(CONSUMER, 'evt-17', ofB.tenant))).toMatchObject({
      providerKey: providerKey(CONSUMER, ofB),
      providerCallDoneAt: expect.any(String),
    });
  });
});
