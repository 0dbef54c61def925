import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { sequencedEntityKey } from '@exactly-once/runtime/aws/sequenced-ledger';
import { PermanentError } from '@exactly-once/runtime/errors';
import { MemoryDynamoDb } from '@exactly-once/tools/simulation/memory-dynamodb';
import { DynamoDbFulfilmentLedger } from '../../lambdas/shop/aws/ledgers';
import {
  parseOrderEvent,
  type OrderCancelledEvent,
  type OrderEvent,
  type OrderPlacedEvent,
} from '../../lambdas/shop/domain/events';
import { fulfilOrderEvent } from '../../lambdas/shop/use-cases/apply-order-events';
import { cancelledEvent, placedEvent } from '../support/orders';
import { stripeLikeProvider } from '../support/providers';
import {
  deadLettered,
  deliver,
  HORIZON_FOR_TESTS,
  loadConsumer,
  sqsMessage as message,
  type ConsumerHarness as Harness,
  type ConsumerName,
} from '../support/consumers';
import { TEST_DEDUPE } from '../support/dedupe';
import { providerCalls as providerCallsIn, transactions } from '../support/neutral-effects-table';

/**
 * The shop's consumers, as the shop writes them, one area per describe: the events they accept
 * (its schema), their effects with the SDK mocked (fulfilment's reservation state and stock, PICK /
 * CANCEL_PICK at the warehouse; loyalty's points and confirmation mail), and fulfilment's cancel
 * superseding its order's OrderPlaced so no PICK follows its CANCEL_PICK. The consumer loop they run
 * in, and the inbox's provider-call marks, are the mechanism's, tested on the neutral fixture
 * (consumers, retry-budget, provider-completion).
 */

describe("the shop's event schema", () => {
  /** The shop's event schema: what its consumers accept as an OrderPlaced or an OrderCancelled. */

  describe('parseOrderEvent', () => {
    const placedFixture: OrderPlacedEvent = {
      eventId: 'ord_1.placed',
      type: 'OrderPlaced',
      entityId: 'ord_1',
      version: 1,
      occurredAt: '2030-01-02T03:04:05.000Z',
      payload: {
        customerId: 'cust-1',
        items: [{ sku: 'SKU-A', quantity: 2, unitPriceCents: 500 }],
        totalCents: 1_000,
      },
    };
    const cancelledFixture: OrderCancelledEvent = {
      eventId: 'ord_1.cancelled',
      type: 'OrderCancelled',
      entityId: 'ord_1',
      version: 2,
      occurredAt: '2030-01-02T04:00:00.000Z',
      payload: { customerId: 'cust-1', items: placedFixture.payload.items },
    };
    /** The placed event with some payload fields replaced. */
    const placedWith = (payload: Record<string, unknown>) => ({
      ...placedFixture,
      payload: { ...placedFixture.payload, ...payload },
    });

    function permanentErrorOf(body: string): PermanentError {
      try {
        parseOrderEvent(body);
      } catch (error) {
        if (error instanceof PermanentError) return error;
        throw error;
      }
      throw new Error(`parsed: ${body}`);
    }

    test.each([
      ['OrderPlaced', placedFixture],
      ['OrderCancelled', cancelledFixture],
    ])('reads an %s', (_type, event) => {
      expect(parseOrderEvent(JSON.stringify(event))).toEqual(event);
    });

    test('drops fields it does not know', () => {
      expect(parseOrderEvent(JSON.stringify({ ...placedFixture, injected: 'x' }))).toEqual(placedFixture);
    });

    test.each(['', 'not json', '{"eventId":', 'null', '42', '"OrderPlaced"', '[]'])(
      '%j is a SchemaViolation (permanent, not retried)',
      (body) => {
        expect(permanentErrorOf(body).permanentCause).toBe('SchemaViolation');
      },
    );

    test.each([
      ['no eventId', { ...placedFixture, eventId: undefined }, 'eventId'],
      ['an empty eventId', { ...placedFixture, eventId: '' }, 'eventId'],
      ['an unknown type', { ...placedFixture, type: 'OrderShipped' }, 'type'],
      ['OrderPlaced at version 2', { ...placedFixture, version: 2 }, 'version'],
      ['OrderCancelled at version 1', { ...cancelledFixture, version: 1 }, 'version'],
      ['no items', placedWith({ items: [] }), 'items'],
      ['a quantity of 0', placedWith({ items: [{ sku: 'S', quantity: 0, unitPriceCents: 1 }] }), 'items.0.quantity'],
      [
        'a fractional quantity',
        placedWith({ items: [{ sku: 'S', quantity: 1.5, unitPriceCents: 1 }] }),
        'items.0.quantity',
      ],
      ['an empty sku', placedWith({ items: [{ sku: '', quantity: 1, unitPriceCents: 1 }] }), 'items.0.sku'],
      ['a negative total', placedWith({ totalCents: -1 }), 'totalCents'],
      ['an OrderPlaced without total', placedWith({ totalCents: undefined }), 'totalCents'],
      ['no entityId', { ...cancelledFixture, entityId: undefined }, 'entityId'],
      ['no customerId', placedWith({ customerId: undefined }), 'customerId'],
      ['no payload', { ...placedFixture, payload: undefined }, 'payload'],
    ])('an event with %s is a SchemaViolation naming the field', (_what, body, field) => {
      const error = permanentErrorOf(JSON.stringify(body));

      expect(error.permanentCause).toBe('SchemaViolation');
      expect(error.message).toContain(field);
    });
  });
});

describe("the shop's consumers' effects", () => {
  /**
   * The shop's two consumers' own effects, with the SDK mocked: fulfilment's reservation state and stock
   * (PICK / CANCEL_PICK at the warehouse), loyalty's points (the confirmation mail). The consumer loop they
   * run in (DLQ, backoff, horizon, deadline, leases, duplicates) is the mechanism's, tested on the neutral
   * fixture in consumers.test.ts.
   */

  const EFFECTS_TABLE = 'effects-table';
  const PROVIDER_TABLE = 'provider-log';
  const QUEUES: Record<ConsumerName, { queue: string; dlq: string }> = {
    fulfilment: {
      queue: 'https://sqs.us-east-1.amazonaws.com/123456789012/fulfilment.fifo',
      dlq: 'https://sqs.us-east-1.amazonaws.com/123456789012/fulfilment-dlq.fifo',
    },
    loyalty: {
      queue: 'https://sqs.us-east-1.amazonaws.com/123456789012/loyalty',
      dlq: 'https://sqs.us-east-1.amazonaws.com/123456789012/loyalty-dlq',
    },
  };

  const harnesses = {} as Record<ConsumerName, Harness>;
  let addMetric: Record<ConsumerName, jest.SpyInstance>;

  beforeAll(async () => {
    for (const name of ['fulfilment', 'loyalty'] as const)
      harnesses[name] = await loadConsumer(name, {
        EFFECTS_TABLE_NAME: EFFECTS_TABLE,
        PROVIDER_LOG_TABLE_NAME: PROVIDER_TABLE,
        INBOX_TTL_SECONDS: String(TEST_DEDUPE.claimTtlSeconds),
        DEDUPE_HORIZON_SECONDS: String(HORIZON_FOR_TESTS),
        QUEUE_URL: QUEUES[name].queue,
        DEAD_LETTER_QUEUE_URL: QUEUES[name].dlq,
        // As the stack sets it from each spec's ledger.
        CONSUMER_LEDGER: name === 'fulfilment' ? 'sequenced' : 'inbox',
      });
  });

  beforeEach(() => {
    for (const h of Object.values(harnesses)) {
      h.doc.reset();
      h.ddb.reset();
      h.sqs.reset();
      h.doc.on(h.docSdk.TransactWriteCommand).resolves({});
      h.doc.on(h.docSdk.UpdateCommand).resolves({});
      h.sqs.on(h.sqsSdk.SendMessageCommand).resolves({ MessageId: 'dlq-copy' });
      h.sqs.on(h.sqsSdk.ChangeMessageVisibilityCommand).resolves({});
    }
    addMetric = {
      fulfilment: jest.spyOn(harnesses.fulfilment.metrics, 'addMetric'),
      loyalty: jest.spyOn(harnesses.loyalty.metrics, 'addMetric'),
    };
  });

  afterEach(() => {
    jest.restoreAllMocks();
    // No consumer ever calls the low-level client directly.
    for (const h of Object.values(harnesses)) expect(h.ddb.calls()).toHaveLength(0);
  });

  /** Two lines, so the stock ledger's per-SKU writes show. */
  const LINES = [
    { sku: 'SKU-A', quantity: 3, unitPriceCents: 250 },
    { sku: 'SKU-B', quantity: 1, unitPriceCents: 1_249 },
  ];
  /** An OrderPlaced event of the order, some of its payload fields replaced. */
  const placed = (orderId: string, payload: Partial<OrderPlacedEvent['payload']> = {}): OrderPlacedEvent => {
    const event = placedEvent(orderId, LINES);
    return { ...event, payload: { ...event.payload, ...payload } };
  };
  const cancelled = (orderId: string, payload: Partial<OrderCancelledEvent['payload']> = {}): OrderCancelledEvent => {
    const event = cancelledEvent(orderId, LINES);
    return { ...event, payload: { ...event.payload, ...payload } };
  };

  const providerCalls = (h: Harness) => providerCallsIn(h, PROVIDER_TABLE);
  const metricNames = (h: Harness) =>
    addMetric[h.name].mock.calls.map((c) => c[0]).filter((metric) => metric !== 'ReceiveCount');

  // ---------------------------------------------------------------- loyalty

  describe('loyalty consumer', () => {
    const h = () => harnesses.loyalty;

    test('OrderPlaced: claim + points += floor(total/100) in one transaction, then the mail provider with loyalty:<eventId>', async () => {
      const event = placed('ord-1', { totalCents: 1_999 });

      const response = await deliver(h(), message(h(), event));

      expect(response.batchItemFailures).toEqual([]);
      expect(transactions(h())).toHaveLength(1);
      const [claim, credit, ...rest] = transactions(h())[0];
      expect(rest).toEqual([]);
      expect(claim.Put?.Item?.pk).toBe(`INBOX#loyalty#${event.eventId}`);
      expect(credit.Update).toMatchObject({
        TableName: EFFECTS_TABLE,
        Key: { pk: `CUSTOMER#${event.payload.customerId}`, sk: 'CUSTOMER' },
        UpdateExpression: expect.stringContaining('ADD points :points'),
        ExpressionAttributeValues: expect.objectContaining({ ':points': 19 }),
      });
      expect(providerCalls(h())).toEqual([
        expect.objectContaining({
          TableName: PROVIDER_TABLE,
          Key: { idempotencyKey: `loyalty:${event.eventId}` },
          ExpressionAttributeValues: expect.objectContaining({
            ':provider': 'mail',
            ':payload': {
              template: 'order-confirmation',
              customerId: event.payload.customerId,
              orderId: event.entityId,
              pointsEarned: 19,
            },
          }),
        }),
      ]);
      expect(metricNames(h())).toEqual(['EffectApplied']);
      expect(h().sqs.calls()).toHaveLength(0);
    });

    test('an OrderCancelled is an UnsupportedEventType for loyalty: to the DLQ at once, no transaction, no mail', async () => {
      const record = message(h(), cancelled('ord-1'), { receiveCount: 1 });

      const response = await deliver(h(), record);

      expect(response.batchItemFailures).toEqual([]);
      expect(deadLettered(h())).toEqual([
        expect.objectContaining({
          QueueUrl: QUEUES.loyalty.dlq,
          MessageBody: record.body,
          MessageAttributes: expect.objectContaining({
            failureCause: { DataType: 'String', StringValue: 'UnsupportedEventType' },
            consumer: { DataType: 'String', StringValue: 'loyalty' },
            attempt: { DataType: 'String', StringValue: '1' },
          }),
        }),
      ]);
      // A standard DLQ takes no group or deduplication id.
      expect(deadLettered(h())[0].MessageGroupId).toBeUndefined();
      expect(deadLettered(h())[0].MessageDeduplicationId).toBeUndefined();
      expect(transactions(h())).toHaveLength(0);
      expect(providerCalls(h())).toHaveLength(0);
    });
  });

  // ---------------------------------------------------------------- fulfilment
});

describe('fulfilment on its sequenced ledger (the in-memory DynamoDB)', () => {
  /**
   * Fulfilment's effects through its use case and its ledger on the in-memory DynamoDB (held to DynamoDB
   * Local by contract suites): the order's state and the claim of its last event on one item per order,
   * the stock per SKU in the same transaction, PICK / CANCEL_PICK at the warehouse, and its cancel taking
   * the owed-call slot of its OrderPlaced so no PICK follows its CANCEL_PICK. The sequenced ledger itself
   * is the mechanism's (sequenced-ledger.test.ts).
   */

  const TABLE = 'effects';
  const db = new MemoryDynamoDb();
  db.createTable(TABLE, { hash: 'pk', range: 'sk' });
  const documents = db.asDocumentClient();
  let orders = 0;

  /** Two lines, so the per-SKU writes show. */
  const LINES = [
    { sku: 'SKU-A', quantity: 3, unitPriceCents: 250 },
    { sku: 'SKU-B', quantity: 1, unitPriceCents: 1_249 },
  ];

  /**
   * A fresh order (its own SKUs, so stock counts are its own), a warehouse that records what it performed
   * (down while `state.down`), the commands the ledger sent, and `beforeSend` to act between two of them.
   */
  function anOrder() {
    orders += 1;
    const orderId = `ord-${orders}`;
    const lines = LINES.map((l) => ({ ...l, sku: `${l.sku}-${orders}` }));
    const { provider: warehouse, performed, state } = stripeLikeProvider();
    const sent: string[] = [];
    const hooks: { beforeSend?: (command: object) => Promise<void> } = {};
    const client = {
      send: async (command: object, options?: unknown) => {
        await hooks.beforeSend?.(command);
        sent.push(command.constructor.name);
        return documents.send(command as never, options as never);
      },
    } as unknown as DynamoDBDocumentClient;
    const ledger = new DynamoDbFulfilmentLedger(client, {
      consumer: 'fulfilment',
      tableName: TABLE,
      inboxTtlSeconds: 3600,
    });
    const fulfil = (event: OrderEvent) => fulfilOrderEvent(event, { ledger, warehouse });
    const item = async () =>
      (
        await documents.send(
          new GetCommand({ TableName: TABLE, Key: sequencedEntityKey('fulfilment', { entityId: orderId }) }),
        )
      ).Item;
    const reserved = async (sku: string) =>
      (await documents.send(new GetCommand({ TableName: TABLE, Key: { pk: `SKU#${sku}`, sk: 'INVENTORY' } }))).Item
        ?.reserved as number | undefined;
    const instructions = () => performed.map((p) => `${String(p.body.instruction)} ${p.key}`);
    return {
      orderId,
      lines,
      placed: placedEvent(orderId, lines),
      cancelled: cancelledEvent(orderId, lines),
      state,
      sent,
      hooks,
      fulfil,
      item,
      reserved,
      instructions,
    };
  }

  const inboxItems = () => db.storedItems(TABLE).filter((i) => String(i.pk).startsWith('INBOX#'));

  test("OrderPlaced: the claim and state RESERVED on the order's item + reserved += qty per SKU, one transaction, then the warehouse with fulfilment:<eventId>", async () => {
    const o = anOrder();
    // Two lines of one SKU: a transaction may not touch an item twice, so they are summed into one ADD.
    const event = { ...o.placed, payload: { ...o.placed.payload, items: [...o.lines, o.lines[0]] } };

    const outcome = await o.fulfil(event);

    expect(outcome).toBe('applied');
    // The legacy read (the order has no inbox-ledger item), the claim with the stock, the done-mark.
    expect(o.sent).toEqual(['GetCommand', 'TransactWriteCommand', 'UpdateCommand']);
    expect(await o.item()).toMatchObject({ orderId: o.orderId, state: 'RESERVED', seq: 1, seqEventId: event.eventId });
    expect([await o.reserved(o.lines[0].sku), await o.reserved(o.lines[1].sku)]).toEqual([6, 1]);
    expect(o.instructions()).toEqual([`PICK fulfilment:${event.eventId}`]);
    expect(inboxItems()).toEqual([]);
  });

  test('the same OrderPlaced delivered twice: one reservation, one PICK', async () => {
    const o = anOrder();

    const outcomes = [await o.fulfil(o.placed), await o.fulfil(o.placed)];

    expect(outcomes).toEqual(['applied', 'duplicate']);
    expect(await o.reserved(o.lines[0].sku)).toBe(3);
    expect(await o.item()).toMatchObject({ seqClaims: 1 });
    expect(o.instructions()).toEqual([`PICK fulfilment:${o.placed.eventId}`]);
  });

  test('OrderCancelled after OrderPlaced: RESERVED -> RELEASED + reserved -= qty in one transaction, then CANCEL_PICK', async () => {
    const o = anOrder();
    await o.fulfil(o.placed);

    const outcome = await o.fulfil(o.cancelled);

    expect(outcome).toBe('applied');
    expect(o.sent).toEqual([
      ...['GetCommand', 'TransactWriteCommand', 'UpdateCommand'],
      ...['GetCommand', 'TransactWriteCommand', 'UpdateCommand'],
    ]);
    expect(await o.item()).toMatchObject({ state: 'RELEASED', seq: 2, seqEventId: o.cancelled.eventId });
    expect([await o.reserved(o.lines[0].sku), await o.reserved(o.lines[1].sku)]).toEqual([0, 0]);
    expect(o.instructions()).toEqual([
      `PICK fulfilment:${o.placed.eventId}`,
      `CANCEL_PICK fulfilment:${o.cancelled.eventId}`,
    ]);
  });

  test('a stale OrderPlaced (the order already has a state) is acked as a no-op: no stock, no warehouse call', async () => {
    const o = anOrder();
    await o.fulfil(o.cancelled);
    const before = await o.item();

    const outcome = await o.fulfil(o.placed);

    expect(outcome).toBe('stale');
    expect(await o.item()).toEqual(before);
    expect(await o.reserved(o.lines[0].sku)).toBeUndefined();
    expect(o.instructions()).toEqual([`CANCEL_PICK fulfilment:${o.cancelled.eventId}`]);
  });

  test('an OrderCancelled delivered again once its order is at version 2 is acked as a duplicate: nothing changes, no second CANCEL_PICK', async () => {
    const o = anOrder();
    await o.fulfil(o.placed);
    await o.fulfil(o.cancelled);
    const before = await o.item();

    const outcome = await o.fulfil(o.cancelled);

    expect(outcome).toBe('duplicate');
    expect(await o.item()).toEqual(before);
    expect(await o.reserved(o.lines[0].sku)).toBe(0);
    expect(o.instructions().filter((i) => i.startsWith('CANCEL_PICK'))).toHaveLength(1);
  });

  test('cancel before place: the release finds no state, so a second write records CANCELLED_UNRESERVED with no stock change', async () => {
    const o = anOrder();

    const outcome = await o.fulfil(o.cancelled);

    expect(outcome).toBe('applied');
    expect(o.sent).toEqual(['GetCommand', 'TransactWriteCommand', 'UpdateCommand', 'UpdateCommand']); // read, refused, recorded, done-mark
    expect(await o.item()).toMatchObject({ state: 'CANCELLED_UNRESERVED', seq: 2, seqClaims: 1 });
    expect(await o.reserved(o.lines[0].sku)).toBeUndefined();
  });

  test('cancel before place, then the late place: nothing stays reserved, and a redelivered cancel changes nothing', async () => {
    const o = anOrder();

    const outcomes = [await o.fulfil(o.cancelled), await o.fulfil(o.placed), await o.fulfil(o.cancelled)];

    expect(outcomes).toEqual(['applied', 'stale', 'duplicate']);
    expect(await o.item()).toMatchObject({ state: 'CANCELLED_UNRESERVED', seq: 2 });
    expect([await o.reserved(o.lines[0].sku), await o.reserved(o.lines[1].sku)]).toEqual([undefined, undefined]);
    expect(o.instructions()).toEqual([`CANCEL_PICK fulfilment:${o.cancelled.eventId}`]);
  });

  test('place, cancel, then the place redelivered: reserved is back to 0 and stays there', async () => {
    const o = anOrder();

    const outcomes = [await o.fulfil(o.placed), await o.fulfil(o.cancelled), await o.fulfil(o.placed)];

    expect(outcomes).toEqual(['applied', 'applied', 'stale']);
    expect([await o.reserved(o.lines[0].sku), await o.reserved(o.lines[1].sku)]).toEqual([0, 0]);
    expect(await o.item()).toMatchObject({ seqClaims: 2 });
  });

  test('cancel racing a reserve (the place applied between its two writes) fails transiently, and its retry releases the stock', async () => {
    const o = anOrder();
    // The place, on a client of its own, lands between the cancel's refused release and its record.
    const place = () =>
      fulfilOrderEvent(o.placed, {
        ledger: new DynamoDbFulfilmentLedger(documents, {
          consumer: 'fulfilment',
          tableName: TABLE,
          inboxTtlSeconds: 3600,
        }),
        warehouse: { send: async () => undefined },
      });
    let raced = false;
    o.hooks.beforeSend = async (command) => {
      // The cancel's record of CANCELLED_UNRESERVED (its one UpdateItem): the place gets there first.
      if (raced || command.constructor.name !== 'UpdateCommand') return;
      raced = true;
      await place();
    };

    const first = o.fulfil(o.cancelled);

    await expect(first).rejects.toThrow(/was reserved while its cancel .* was being recorded: retried/);
    expect(await o.item()).toMatchObject({ state: 'RESERVED', seq: 1 });
    const retried = await o.fulfil(o.cancelled);
    expect(retried).toBe('applied');
    expect(await o.item()).toMatchObject({ state: 'RELEASED', seq: 2 });
    expect([await o.reserved(o.lines[0].sku), await o.reserved(o.lines[1].sku)]).toEqual([0, 0]);
  });

  describe('fulfilment: no PICK after its CANCEL_PICK', () => {
    test("a cancel applied from RESERVED takes the owed-call slot of its OrderPlaced, in the claim's own transaction", async () => {
      const o = anOrder();
      o.state.down = true;
      await expect(o.fulfil(o.placed)).rejects.toThrow('provider down'); // the PICK owed
      expect(await o.item()).toMatchObject({ owedCall: { eventId: o.placed.eventId } });
      o.state.down = false;

      await o.fulfil(o.cancelled);

      // The cancel's call took the one slot, and its done-mark emptied it: the PICK is owed no more.
      expect(await o.item()).not.toHaveProperty('owedCall');
      expect(o.instructions()).toEqual([`CANCEL_PICK fulfilment:${o.cancelled.eventId}`]);
    });

    test('a redriven OrderPlaced whose cancel was applied meanwhile: no PICK, though its call never completed', async () => {
      const o = anOrder();
      o.state.down = true;
      await expect(o.fulfil(o.placed)).rejects.toThrow('provider down');
      o.state.down = false;
      await o.fulfil(o.cancelled);

      const outcome = await o.fulfil(o.placed);

      expect(outcome).toBe('stale');
      expect(o.instructions()).toEqual([`CANCEL_PICK fulfilment:${o.cancelled.eventId}`]);
    });
  });
});
