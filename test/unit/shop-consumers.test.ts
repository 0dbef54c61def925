import { DynamoDBClient, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  TransactWriteCommand,
  UpdateCommand,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { PermanentError } from '@exactly-once/runtime/errors';
import type { ExternalProvider } from '@exactly-once/runtime/provider/provider';
import { DynamoDbFulfilmentLedger } from '../../lambdas/shop/aws/ledgers';
import {
  orderCancelledEvent,
  orderPlacedEvent,
  parseOrderEvent,
  type OrderCancelledEvent,
  type OrderEvent,
  type OrderPlacedEvent,
} from '../../lambdas/shop/domain/events';
import { fulfilOrderEvent } from '../../lambdas/shop/use-cases/apply-order-events';
import { cancelledEvent, placedEvent } from '../support/orders';
import {
  deadLettered,
  deliver,
  failedIds,
  HORIZON_FOR_TESTS,
  loadConsumer,
  sqsMessage as message,
  visibilityChanges,
  type ConsumerHarness as Harness,
  type ConsumerName,
} from '../support/consumers';
import { TEST_DEDUPE } from '../support/dedupe';
import {
  canceledTransaction,
  claimOf,
  FakeEffectsTable,
  providerCalls as providerCallsIn,
  providerKeys as providerKeysIn,
  transactions,
} from '../support/neutral-effects-table';

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
  const providerKeys = (h: Harness) => providerKeysIn(h, PROVIDER_TABLE);
  const metricNames = (h: Harness) =>
    addMetric[h.name].mock.calls.map((c) => c[0]).filter((metric) => metric !== 'ReceiveCount');
  /** The shop's items in the fake table: a SKU's reserved stock, an order's fulfilment state, a customer's points. */
  const reserved = (table: FakeEffectsTable, sku: string) =>
    table.items.get(`SKU#${sku}`)?.reserved as number | undefined;
  const fulfilment = (table: FakeEffectsTable, orderId: string) => table.items.get(`FULFILMENT#${orderId}`);

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

  describe('fulfilment consumer', () => {
    const h = () => harnesses.fulfilment;

    test('OrderPlaced: claim + state RESERVED (only if no state yet) + reserved += qty per SKU, then the warehouse with fulfilment:<eventId>', async () => {
      // Two lines of one SKU: a transaction may not touch an item twice, so they are summed into one ADD.
      const event = placed('ord-1', {
        items: [
          { sku: 'SKU-A', quantity: 3, unitPriceCents: 250 },
          { sku: 'SKU-B', quantity: 1, unitPriceCents: 100 },
          { sku: 'SKU-A', quantity: 2, unitPriceCents: 250 },
        ],
        totalCents: 1_350,
      });

      const response = await deliver(h(), message(h(), event));

      expect(response.batchItemFailures).toEqual([]);
      const [claim, state, ...stock] = transactions(h())[0];
      expect(claim.Put?.Item?.pk).toBe(`INBOX#fulfilment#${event.eventId}`);
      expect(state.Put).toMatchObject({
        TableName: EFFECTS_TABLE,
        Item: { pk: 'FULFILMENT#ord-1', sk: 'FULFILMENT', orderId: 'ord-1', version: 1, state: 'RESERVED' },
        ConditionExpression: 'attribute_not_exists(pk)',
      });
      expect(stock.map((s) => [s.Update?.Key?.pk, s.Update?.ExpressionAttributeValues?.[':delta']])).toEqual([
        ['SKU#SKU-A', 5],
        ['SKU#SKU-B', 1],
      ]);
      expect(stock.every((s) => s.Update?.UpdateExpression?.includes('ADD reserved :delta'))).toBe(true);
      expect(providerCalls(h())).toEqual([
        expect.objectContaining({
          TableName: PROVIDER_TABLE,
          Key: { idempotencyKey: `fulfilment:${event.eventId}` },
          ExpressionAttributeValues: expect.objectContaining({
            ':provider': 'warehouse',
            ':payload': { instruction: 'PICK', orderId: 'ord-1', items: event.payload.items },
          }),
        }),
      ]);
      expect(metricNames(h())).toEqual(['EffectApplied']);
      expect(h().sqs.calls()).toHaveLength(0);
    });

    test('OrderCancelled after OrderPlaced: claim + RESERVED -> RELEASED (only from version 1) + reserved -= qty, then CANCEL_PICK', async () => {
      const table = new FakeEffectsTable(h(), EFFECTS_TABLE);

      await deliver(h(), message(h(), placed('ord-1')));
      const response = await deliver(h(), message(h(), cancelled('ord-1')));

      expect(response.batchItemFailures).toEqual([]);
      const [claim, state, ...stock] = transactions(h())[1];
      expect(claim.Put?.Item?.pk).toBe('INBOX#fulfilment#ord-1.cancelled');
      expect(state.Update).toMatchObject({
        Key: { pk: 'FULFILMENT#ord-1', sk: 'FULFILMENT' },
        ConditionExpression: 'version = :reserved',
        ExpressionAttributeValues: expect.objectContaining({ ':reserved': 1, ':released': 2, ':state': 'RELEASED' }),
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      });
      expect(stock.map((s) => s.Update?.ExpressionAttributeValues?.[':delta'])).toEqual([-3, -1]);
      expect(reserved(table, 'SKU-A')).toBe(0);
      expect(reserved(table, 'SKU-B')).toBe(0);
      expect(fulfilment(table, 'ord-1')).toMatchObject({ version: 2, state: 'RELEASED' });
      expect(providerCalls(h())[1]).toMatchObject({
        Key: { idempotencyKey: 'fulfilment:ord-1.cancelled' },
        ExpressionAttributeValues: expect.objectContaining({
          ':payload': expect.objectContaining({ instruction: 'CANCEL_PICK' }),
        }),
      });
    });

    test('a stale OrderPlaced (the order already has a state) is acked as a no-op: no stock, no warehouse call', async () => {
      h()
        .doc.on(h().docSdk.TransactWriteCommand)
        .rejects(
          canceledTransaction(h(), [
            { Code: 'None' },
            { Code: 'ConditionalCheckFailed' },
            { Code: 'None' },
            { Code: 'None' },
          ]),
        );

      const response = await deliver(h(), message(h(), placed('ord-1')));

      expect(response.batchItemFailures).toEqual([]);
      expect(transactions(h())).toHaveLength(1);
      expect(providerCalls(h())).toHaveLength(0);
      expect(metricNames(h())).toEqual(['StaleEventIgnored']);
      expect(h().sqs.calls()).toHaveLength(0);
    });

    test('a stale OrderCancelled (the order is already at version 2) is acked as a no-op: one transaction, no warehouse call', async () => {
      h()
        .doc.on(h().docSdk.TransactWriteCommand)
        .rejects(
          canceledTransaction(h(), [
            { Code: 'None' },
            {
              Code: 'ConditionalCheckFailed',
              Item: { pk: 'FULFILMENT#ord-1', sk: 'FULFILMENT', version: 2, state: 'RELEASED' },
            },
            { Code: 'None' },
            { Code: 'None' },
          ]),
        );

      const response = await deliver(h(), message(h(), cancelled('ord-1')));

      expect(response.batchItemFailures).toEqual([]);
      expect(transactions(h())).toHaveLength(1);
      expect(providerCalls(h())).toHaveLength(0);
      expect(metricNames(h())).toEqual(['StaleEventIgnored']);
    });

    test('cancel before place: the release finds no state, so a second transaction records CANCELLED_UNRESERVED with no stock change', async () => {
      h()
        .doc.on(h().docSdk.TransactWriteCommand)
        .rejectsOnce(
          canceledTransaction(h(), [
            { Code: 'None' },
            { Code: 'ConditionalCheckFailed' },
            { Code: 'None' },
            { Code: 'None' },
          ]),
        )
        .resolves({});

      const response = await deliver(h(), message(h(), cancelled('ord-1')));

      expect(response.batchItemFailures).toEqual([]);
      const [, second] = transactions(h());
      expect(transactions(h())).toHaveLength(2);
      expect(second).toHaveLength(2); // the claim and the state: nothing to release
      expect(second[0].Put?.Item?.pk).toBe('INBOX#fulfilment#ord-1.cancelled');
      expect(second[1].Put).toMatchObject({
        Item: { pk: 'FULFILMENT#ord-1', sk: 'FULFILMENT', version: 2, state: 'CANCELLED_UNRESERVED' },
        ConditionExpression: 'attribute_not_exists(pk)',
      });
      expect(metricNames(h())).toEqual(['EffectApplied']);
    });

    test('cancel before place, then the late place: nothing stays reserved, and a redelivered cancel changes nothing', async () => {
      const table = new FakeEffectsTable(h(), EFFECTS_TABLE);

      const cancel = await deliver(h(), message(h(), cancelled('ord-1')));
      const place = await deliver(h(), message(h(), placed('ord-1')));
      const cancelAgain = await deliver(h(), message(h(), cancelled('ord-1'), { receiveCount: 2 }));

      expect([cancel, place, cancelAgain].flatMap(failedIds)).toEqual([]);
      expect(fulfilment(table, 'ord-1')).toMatchObject({ version: 2, state: 'CANCELLED_UNRESERVED' });
      expect(reserved(table, 'SKU-A')).toBeUndefined();
      expect(reserved(table, 'SKU-B')).toBeUndefined();
      expect(metricNames(h())).toEqual(['EffectApplied', 'StaleEventIgnored', 'DuplicateSuppressed']);
      expect(providerKeys(h())).not.toContain('fulfilment:ord-1.placed');
    });

    test('place, cancel, then the place redelivered: reserved is back to 0 and stays there', async () => {
      const table = new FakeEffectsTable(h(), EFFECTS_TABLE);

      await deliver(h(), message(h(), placed('ord-1')));
      await deliver(h(), message(h(), cancelled('ord-1')));
      const late = await deliver(h(), message(h(), placed('ord-1'), { receiveCount: 3 }));

      expect(late.batchItemFailures).toEqual([]);
      expect(reserved(table, 'SKU-A')).toBe(0);
      expect(reserved(table, 'SKU-B')).toBe(0);
      expect(table.commits).toBe(2);
    });

    test('cancel racing a reserve (its state appears between the two transactions) is transient, retried on the normal path', async () => {
      let releaseAttempts = 0;
      h()
        .doc.on(h().docSdk.TransactWriteCommand)
        .callsFake((input: TransactWriteCommandInput) => {
          if (claimOf(input.TransactItems ?? []) !== 'INBOX#fulfilment#ord-1.cancelled') return {};
          releaseAttempts += 1;
          // First the release finds no state; then the CANCELLED_UNRESERVED put finds the reserve's.
          throw releaseAttempts === 1
            ? canceledTransaction(h(), [
                { Code: 'None' },
                { Code: 'ConditionalCheckFailed' },
                { Code: 'None' },
                { Code: 'None' },
              ])
            : canceledTransaction(h(), [{ Code: 'None' }, { Code: 'ConditionalCheckFailed' }]);
        });
      const racing = message(h(), cancelled('ord-1'));

      const response = await deliver(h(), message(h(), placed('ord-0')), racing);

      expect(releaseAttempts).toBe(2);
      expect(failedIds(response)).toEqual([racing.messageId]);
      expect(visibilityChanges(h()).map((v) => v.ReceiptHandle)).toEqual([racing.receiptHandle]);
      expect(providerKeys(h())).toEqual(['fulfilment:ord-0.placed']);
      expect(metricNames(h()).sort()).toEqual(['EffectApplied', 'TransientFailure']);
    });
  });
});

describe("fulfilment's cancel supersedes its OrderPlaced", () => {
  /**
   * The shop's use of the provider-call state: fulfilment's cancel supersedes its order's OrderPlaced
   * entry in the cancel's own transaction, so a redriven OrderPlaced never sends a PICK after the
   * CANCEL_PICK. The inbox entry's done and superseded marks themselves are the mechanism's
   * (provider-completion.test.ts).
   */

  const TABLE = 'effects';
  const NOW = new Date('2030-01-02T03:04:05.000Z');
  const doc = mockClient(DynamoDBDocumentClient);
  const client = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
  const options = { tableName: TABLE, inboxTtlSeconds: 1_000, now: () => NOW };

  const order = {
    orderId: 'ord-1',
    customerId: 'cust-1',
    items: [{ sku: 'SKU-A', quantity: 2, unitPriceCents: 500 }],
    totalCents: 1_000,
  };
  const placedOrder = orderPlacedEvent(order, NOW.toISOString());
  const cancelledOrder = orderCancelledEvent(order, NOW.toISOString());

  function recordingProvider(): ExternalProvider & { keys: string[] } {
    const keys: string[] = [];
    return { keys, send: async (key: string) => void keys.push(key) };
  }

  /** The cancellation DynamoDB returns when the claim's entry exists: its old image (ALL_OLD) on reason 0. */
  function claimTaken(entry: Record<string, unknown>, items: number) {
    return new TransactionCanceledException({
      message:
        'Transaction cancelledOrder, please refer cancellation reasons for specific reasons [ConditionalCheckFailed]',
      $metadata: {},
      CancellationReasons: [
        { Code: 'ConditionalCheckFailed', Item: marshall(entry) },
        ...Array.from({ length: items - 1 }, () => ({ Code: 'None' })),
      ],
    });
  }

  const inboxEntry = (consumer: string, eventId: string, extra: Record<string, unknown> = {}) => ({
    pk: `INBOX#${consumer}#${eventId}`,
    sk: 'INBOX',
    consumer,
    eventId,
    claimedAt: '2030-01-02T02:04:05.000Z', // an hour before NOW: well inside the provider's key window
    expiresAt: 1_900_000_000,
    ...extra,
  });

  const fulfil = (event: OrderEvent, warehouse = recordingProvider()) =>
    fulfilOrderEvent(event, {
      ledger: new DynamoDbFulfilmentLedger(client, { ...options, consumer: 'fulfilment' }),
      warehouse,
    });

  const sentTransactions = () => doc.commandCalls(TransactWriteCommand).map((c) => c.args[0].input.TransactItems ?? []);
  const commandNames = () => doc.calls().map((c) => c.args[0].constructor.name);

  beforeEach(() => {
    doc.reset();
    doc.on(TransactWriteCommand).resolves({});
    doc.on(UpdateCommand).resolves({});
  });

  describe('fulfilment: no PICK after its CANCEL_PICK', () => {
    test('a cancel applied from RESERVED marks the OrderPlaced inbox entry superseded, in the same transaction', async () => {
      await fulfil(cancelledOrder);

      const items = sentTransactions()[0];
      expect(items.at(-1)?.Update).toEqual({
        TableName: TABLE,
        Key: { pk: `INBOX#fulfilment#${placedOrder.eventId}`, sk: 'INBOX' },
        UpdateExpression:
          'SET #superseded = :by, #entity = :entity, #version = :version, #ttl = if_not_exists(#ttl, :expires)',
        ExpressionAttributeNames: {
          '#superseded': 'supersededBy',
          '#entity': 'supersededByEntityId',
          '#version': 'supersededByVersion',
          '#ttl': 'expiresAt',
        },
        ExpressionAttributeValues: {
          ':by': cancelledOrder.eventId,
          ':entity': cancelledOrder.entityId,
          ':version': cancelledOrder.version,
          ':expires': Math.floor(NOW.getTime() / 1000) + 1_000,
        },
      });
    });

    test('a redriven OrderPlaced whose cancel was applied meanwhile: no PICK, though its call never completed', async () => {
      doc
        .on(TransactWriteCommand)
        .rejects(
          claimTaken(inboxEntry('fulfilment', placedOrder.eventId, { supersededBy: cancelledOrder.eventId }), 3),
        );
      const warehouse = recordingProvider();

      const outcome = await fulfil(placedOrder, warehouse);

      expect(outcome).toBe('duplicate');
      expect(warehouse.keys).toEqual([]);
      expect(commandNames()).toEqual(['TransactWriteCommand']);
    });
  });
});
