import type { TransactWriteCommandInput, UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { OrderCancelledEvent, OrderPlacedEvent } from '../../lambdas/shop/domain/events';
import { lambdaContext } from '../support/api-events';
import { cancelledEvent, placedEvent } from '../support/orders';
import {
  deadLettered,
  deliver,
  failedIds,
  loadConsumer,
  sqsMessage as message,
  visibilityChanges,
  type ConsumerHarness,
  type ConsumerName,
  HORIZON_FOR_TESTS,
} from '../support/consumers';
import { TEST_DEDUPE } from '../support/dedupe';

/**
 * The two consumer handlers, every record path, with the SDK mocked.
 *
 * Each handler is loaded with the SDK mocked in its own module registry
 * (loadConsumer). The document client is what the consumers call; the
 * low-level client must see no call at all.
 *
 * Where exactly-once is the point, a small fake of the Effects table stands
 * behind TransactWriteItems: it enforces the two conditions the ledgers use
 * (`attribute_not_exists(pk)`, `version = :reserved`), cancels the whole
 * transaction as DynamoDB does, and applies SET/ADD, so the tests read the
 * resulting stock and points directly.
 */

type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];
type Harness = ConsumerHarness;

const EFFECTS_TABLE = 'effects-table';
const PROVIDER_TABLE = 'provider-log';
const INBOX_TTL_SECONDS = TEST_DEDUPE.claimTtlSeconds;
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
/** The handlers' documented defaults (RETRY_BUDGET: BACKOFF_BASE_SECONDS 2, cap 300 s). */
const BACKOFF = { fulfilment: { base: 2, cap: 300 }, loyalty: { base: 2, cap: 300 } };

async function load(name: ConsumerName): Promise<Harness> {
  delete process.env.BACKOFF_BASE_SECONDS;
  delete process.env.BACKOFF_CAP_SECONDS;
  return loadConsumer(name, {
    EFFECTS_TABLE_NAME: EFFECTS_TABLE,
    PROVIDER_LOG_TABLE_NAME: PROVIDER_TABLE,
    INBOX_TTL_SECONDS: String(INBOX_TTL_SECONDS),
    DEDUPE_HORIZON_SECONDS: String(HORIZON_FOR_TESTS),
    QUEUE_URL: QUEUES[name].queue,
    DEAD_LETTER_QUEUE_URL: QUEUES[name].dlq,
    CODE_VERSION: CODE_VERSION,
  });
}

/** What FunctionWithDefaults puts in CODE_VERSION: the bundle's asset hash, 12 characters. */
const CODE_VERSION = '1a1ec7fd2b9d';

const harnesses = {} as Record<ConsumerName, Harness>;
let addMetric: Record<ConsumerName, jest.SpyInstance>;

beforeAll(async () => {
  harnesses.fulfilment = await load('fulfilment');
  harnesses.loyalty = await load('loyalty');
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

// ---------------------------------------------------------------- fixtures

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

const transactions = (h: Harness): TransactItem[][] =>
  h.doc.commandCalls(h.docSdk.TransactWriteCommand).map((c) => c.args[0].input.TransactItems ?? []);
const claimOf = (items: TransactItem[]) => String(items[0]?.Put?.Item?.pk);
const claimedEventIds = (h: Harness) => transactions(h).map((t) => claimOf(t).replace(`INBOX#${h.name}#`, ''));
const providerCalls = (h: Harness) =>
  h.doc
    .commandCalls(h.docSdk.UpdateCommand)
    .map((c) => c.args[0].input)
    .filter((input) => input.TableName === PROVIDER_TABLE);
const providerKeys = (h: Harness) => providerCalls(h).map((c) => c.Key?.idempotencyKey);
const leaseReleases = (h: Harness) =>
  h.doc
    .commandCalls(h.docSdk.UpdateCommand)
    .map((c) => c.args[0].input)
    .filter((input) => input.UpdateExpression?.startsWith('REMOVE #lease'));
/** The outcome metrics a delivery emitted (ReceiveCount, emitted for every record, is `receiveCounts`). */
const metricNames = (h: Harness) =>
  addMetric[h.name].mock.calls.map((c) => c[0]).filter((metric) => metric !== 'ReceiveCount');
const receiveCounts = (h: Harness) =>
  addMetric[h.name].mock.calls.filter((c) => c[0] === 'ReceiveCount').map((c) => c[2] as number);

function canceledTransaction(h: Harness, reasons: { Code: string; Item?: Record<string, unknown> }[]) {
  return new h.ddbSdk.TransactionCanceledException({
    message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((r) => r.Code).join(', ')}]`,
    $metadata: { httpStatusCode: 400 },
    CancellationReasons: reasons.map((r) => ({ Code: r.Code, ...(r.Item ? { Item: marshall(r.Item) } : {}) })),
  });
}

/** The claim cancellation DynamoDB returns when the inbox already holds the eventId. */
const claimTaken = (h: Harness, items: number) =>
  canceledTransaction(h, [
    { Code: 'ConditionalCheckFailed' },
    ...Array.from({ length: items - 1 }, () => ({ Code: 'None' })),
  ]);

/**
 * A small Effects table behind TransactWriteItems and the inbox's UpdateItem:
 * all-or-nothing, with the ledgers' conditions enforced, the old image returned
 * where ALL_OLD is asked (the claim), and SET/ADD applied. `failFor` injects an
 * error for a given eventId (before anything is written), as a throttle would.
 *
 * `conflicts` makes it behave like DynamoDB under concurrency: each transaction
 * stays in flight for a turn of the event loop, and one that touches an item
 * another in-flight transaction holds is cancelled with TransactionConflict on
 * that item (a single write to such an item fails with TransactionConflictException).
 */
class FakeEffectsTable {
  readonly items = new Map<string, Record<string, unknown>>();
  readonly failFor = new Map<string, Error>();
  conflicts = false;
  conflictsRaised = 0;
  /** Fails the next done-mark (provider call recorded done) with this error, once. */
  failDoneMarkOnce: Error | undefined;
  commits = 0;
  private readonly inFlight = new Set<string>();

  constructor(private readonly h: Harness) {
    h.doc.on(h.docSdk.TransactWriteCommand).callsFake((input: TransactWriteCommandInput) => this.transact(input));
    h.doc
      .on(h.docSdk.UpdateCommand, { TableName: EFFECTS_TABLE })
      .callsFake((input: UpdateCommandInput) => this.update(input));
  }

  points(customerId: string): number | undefined {
    return this.items.get(`CUSTOMER#${customerId}`)?.points as number | undefined;
  }

  reserved(sku: string): number | undefined {
    return this.items.get(`SKU#${sku}`)?.reserved as number | undefined;
  }

  fulfilment(orderId: string): Record<string, unknown> | undefined {
    return this.items.get(`FULFILMENT#${orderId}`);
  }

  inbox(eventId: string): Record<string, unknown> | undefined {
    return this.items.get(`INBOX#${this.h.name}#${eventId}`);
  }

  private async transact(input: TransactWriteCommandInput): Promise<Record<string, never>> {
    const items = input.TransactItems ?? [];
    const claim = claimOf(items);
    const injected = [...this.failFor].find(([eventId]) => claim === `INBOX#${this.h.name}#${eventId}`)?.[1];
    if (injected !== undefined) throw injected;
    const keys = items.map((item) => String(item.Put?.Item?.pk ?? item.Update?.Key?.pk));
    if (this.conflicts) {
      if (keys.some((k) => this.inFlight.has(k))) {
        this.conflictsRaised += 1;
        throw canceledTransaction(
          this.h,
          keys.map((k) => ({ Code: this.inFlight.has(k) ? 'TransactionConflict' : 'None' })),
        );
      }
      keys.forEach((k) => this.inFlight.add(k));
      await new Promise((resolve) => setImmediate(resolve));
    }
    try {
      const reasons = items.map((item) => this.check(item));
      if (reasons.some((r) => r.Code !== 'None')) throw canceledTransaction(this.h, reasons);
      for (const item of items) this.apply(item);
      this.commits += 1;
      return {};
    } finally {
      keys.forEach((k) => this.inFlight.delete(k));
    }
  }

  /**
   * The inbox's own writes: the provider call recorded done (`attribute_exists(pk)`),
   * its lease taken by a duplicate (done, superseded, a live lease of another: refused
   * with the old item), and the lease given back by its holder.
   */
  private update(input: UpdateCommandInput): Record<string, never> {
    const pk = String(input.Key?.pk);
    if (this.conflicts && this.inFlight.has(pk)) {
      this.conflictsRaised += 1;
      throw new this.h.ddbSdk.TransactionConflictException({ message: 'Transaction is ongoing', $metadata: {} });
    }
    const old = this.items.get(pk);
    const values = input.ExpressionAttributeValues ?? {};
    const refuse = () => {
      throw new this.h.ddbSdk.ConditionalCheckFailedException({
        message: 'The conditional request failed',
        $metadata: {},
        Item: input.ReturnValuesOnConditionCheckFailure === 'ALL_OLD' && old ? (marshall(old) as never) : undefined,
      });
    };
    const condition = input.ConditionExpression ?? '';
    if (condition === '#holder = :me') {
      if (old?.providerCallLeaseHolder !== values[':me']) refuse();
      delete old!.providerCallLeaseUntil;
      delete old!.providerCallLeaseHolder;
      return {};
    }
    if (condition.includes('#lease < :now')) {
      const free =
        old !== undefined &&
        old.providerCallDoneAt === undefined &&
        old.supersededBy === undefined &&
        (old.providerCallLeaseUntil === undefined ||
          Number(old.providerCallLeaseUntil) < Number(values[':now']) ||
          old.providerCallLeaseHolder === values[':me']);
      if (!free) refuse();
    } else if (condition !== 'attribute_exists(pk)') {
      throw new Error(`fake table: unsupported condition ${input.ConditionExpression}`);
    } else if (old === undefined) refuse();
    else if (this.failDoneMarkOnce !== undefined) {
      const error = this.failDoneMarkOnce;
      this.failDoneMarkOnce = undefined;
      throw error;
    }
    this.apply({ Update: input as NonNullable<TransactItem['Update']> });
    return {};
  }

  private check(item: TransactItem): { Code: string; Item?: Record<string, unknown> } {
    if (item.Put) {
      const condition = item.Put.ConditionExpression;
      if (condition === undefined) return { Code: 'None' };
      if (condition !== 'attribute_not_exists(pk)') throw new Error(`fake table: unsupported condition ${condition}`);
      const old = this.items.get(String(item.Put.Item?.pk));
      if (old === undefined) return { Code: 'None' };
      return {
        Code: 'ConditionalCheckFailed',
        Item: item.Put.ReturnValuesOnConditionCheckFailure === 'ALL_OLD' ? old : undefined,
      };
    }
    if (item.Update) {
      const condition = item.Update.ConditionExpression;
      if (condition === undefined) return { Code: 'None' };
      if (condition !== 'version = :reserved') throw new Error(`fake table: unsupported condition ${condition}`);
      const old = this.items.get(String(item.Update.Key?.pk));
      if (old !== undefined && old.version === item.Update.ExpressionAttributeValues?.[':reserved'])
        return { Code: 'None' };
      return {
        Code: 'ConditionalCheckFailed',
        Item: item.Update.ReturnValuesOnConditionCheckFailure === 'ALL_OLD' ? old : undefined,
      };
    }
    throw new Error('fake table: only Put and Update are used by the ledgers');
  }

  private apply(item: TransactItem): void {
    if (item.Put) {
      this.items.set(String(item.Put.Item?.pk), { ...item.Put.Item });
      return;
    }
    const update = item.Update;
    if (!update) return;
    const pk = String(update.Key?.pk);
    const next: Record<string, unknown> = { ...update.Key, ...this.items.get(pk) };
    const values = update.ExpressionAttributeValues ?? {};
    const nameOf = (token: string) => update.ExpressionAttributeNames?.[token] ?? token;
    for (const [, verb, body] of (update.UpdateExpression ?? '').matchAll(
      /(SET|ADD)\s+(.*?)(?=\s+(?:SET|ADD|REMOVE)\s|$)/g,
    )) {
      // Commas inside if_not_exists(a, :b) do not separate clauses.
      for (const clause of body.split(/,(?![^(]*\))/).map((c) => c.trim())) {
        if (verb === 'SET') {
          const [name, value] = clause.split(/\s*=\s*/);
          const ifNotExists = /^if_not_exists\((\S+),\s*(:\w+)\)$/.exec(value);
          if (ifNotExists !== null) {
            next[nameOf(name)] = next[nameOf(ifNotExists[1])] ?? values[ifNotExists[2]];
            continue;
          }
          if (!value.startsWith(':')) throw new Error(`fake table: unsupported SET ${clause}`);
          next[nameOf(name)] = values[value];
        } else {
          const [name, value] = clause.split(/\s+/);
          next[nameOf(name)] = Number(next[nameOf(name)] ?? 0) + Number(values[value]);
        }
      }
    }
    this.items.set(pk, next);
  }
}

/** A DynamoDB error that is not the claim's condition: throttling. */
function throttled(h: Harness) {
  return new h.ddbSdk.ProvisionedThroughputExceededException({
    message: 'Rate of requests exceeds the allowed throughput',
    $metadata: {},
  });
}

// ---------------------------------------------------------------- both consumers

describe.each(['fulfilment', 'loyalty'] as const)('%s consumer', (name) => {
  const h = () => harnesses[name];

  describe('permanent errors go to the DLQ at once, with why, and are acked', () => {
    test.each([
      ['a body that is not JSON', 'this is not json {'],
      ['an empty object', '{}'],
      ['an unknown event type', JSON.stringify({ ...placed('ord-x'), type: 'OrderShipped' })],
      ['an OrderPlaced without items', JSON.stringify(placed('ord-x', { items: [] }))],
      ['an OrderPlaced with the wrong version', JSON.stringify({ ...placed('ord-x'), version: 2 })],
      [
        'a line with quantity 0',
        JSON.stringify(placed('ord-x', { items: [{ sku: 'S', quantity: 0, unitPriceCents: 1 }] })),
      ],
    ])(
      '%s: SchemaViolation, copied to the DLQ with cause/consumer/attempt/code version, not reported failed',
      async (_what, body) => {
        const record = message(h(), body, { receiveCount: 3, groupId: 'ord-x' });

        const response = await deliver(h(), record);

        expect(response.batchItemFailures).toEqual([]);
        expect(deadLettered(h())).toHaveLength(1);
        const copy = deadLettered(h())[0];
        expect(copy.QueueUrl).toBe(QUEUES[name].dlq);
        expect(copy.MessageBody).toBe(body);
        expect(copy.MessageAttributes).toMatchObject({
          failureCause: { DataType: 'String', StringValue: 'SchemaViolation' },
          consumer: { DataType: 'String', StringValue: name },
          attempt: { DataType: 'String', StringValue: '3' },
          codeVersion: { DataType: 'String', StringValue: CODE_VERSION },
          originalMessageId: { DataType: 'String', StringValue: record.messageId },
          failureMessage: { DataType: 'String', StringValue: expect.stringMatching(/\S/) },
        });
        expect(transactions(h())).toHaveLength(0);
        expect(providerCalls(h())).toHaveLength(0);
        expect(visibilityChanges(h())).toHaveLength(0);
        expect(metricNames(h())).toEqual(['PermanentFailure']);
      },
    );

    test('a permanent error whose DLQ copy cannot be sent is reported failed: the message is never dropped', async () => {
      h().sqs.on(h().sqsSdk.SendMessageCommand).rejects(new Error('SQS unavailable'));
      const ok = message(h(), placed('ord-ok'));
      const poison = message(h(), 'not json');

      const response = await deliver(h(), ok, poison);

      expect(failedIds(response)).toEqual([poison.messageId]);
    });
  });

  describe('transient errors: backoff from the receive count, reported failed, never swallowed', () => {
    test.each([
      ['a throttle', (x: Harness) => throttled(x)],
      [
        'an internal server error',
        (x: Harness) => new x.ddbSdk.InternalServerError({ message: 'Internal server error', $metadata: {} }),
      ],
      ['a plain network error', () => Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })],
      [
        'a cancellation for TransactionConflict on the claim',
        (x: Harness) => canceledTransaction(x, [{ Code: 'TransactionConflict' }, { Code: 'None' }]),
      ],
      [
        'a cancellation for TransactionConflict on an effect',
        (x: Harness) => canceledTransaction(x, [{ Code: 'None' }, { Code: 'TransactionConflict' }]),
      ],
      [
        'a cancellation for ThrottlingError',
        (x: Harness) => canceledTransaction(x, [{ Code: 'ThrottlingError' }, { Code: 'None' }]),
      ],
      ['a cancellation with no reasons', (x: Harness) => canceledTransaction(x, [])],
    ])('%s', async (_what, error) => {
      const table = new FakeEffectsTable(h());
      const ok = message(h(), placed('ord-ok'));
      const failing = message(h(), placed('ord-fail'), { receiveCount: 2 });
      table.failFor.set('ord-fail.placed', error(h()));
      jest.spyOn(Math, 'random').mockReturnValue(0.5);

      const response = await deliver(h(), ok, failing);

      expect(failedIds(response)).toEqual([failing.messageId]);
      // attempt 2: ceiling min(cap, 2 * 2^1) = 4, floor 2; jitter 0.5 -> 2 + floor(0.5 * 3) = 3.
      expect(visibilityChanges(h())).toEqual([
        { QueueUrl: QUEUES[name].queue, ReceiptHandle: failing.receiptHandle, VisibilityTimeout: 3 },
      ]);
      expect(deadLettered(h())).toHaveLength(0);
      expect(providerKeys(h())).toEqual([`${name}:ord-ok.placed`]);
      expect(table.commits).toBe(1);
      expect(metricNames(h()).sort()).toEqual(['EffectApplied', 'TransientFailure']);
    });

    test.each([
      [1, BACKOFF[name].base],
      [3, 8],
      [5, Math.min(BACKOFF[name].cap, 32)],
      [7, Math.min(BACKOFF[name].cap, 128)],
      [50, BACKOFF[name].cap],
    ])('receive count %i: at most %i s of backoff (jitter at its top)', async (receiveCount, ceiling) => {
      const table = new FakeEffectsTable(h());
      table.failFor.set('ord-fail.placed', throttled(h()));
      const failing = message(h(), placed('ord-fail'), { receiveCount });
      jest.spyOn(Math, 'random').mockReturnValue(0.999_999);

      await deliver(h(), message(h(), placed('ord-ok')), failing);

      expect(visibilityChanges(h()).map((v) => v.VisibilityTimeout)).toEqual([ceiling]);
    });

    test('jitter at its bottom still waits half the ceiling (the guaranteed part of the budget)', async () => {
      const table = new FakeEffectsTable(h());
      table.failFor.set('ord-fail.placed', throttled(h()));
      jest.spyOn(Math, 'random').mockReturnValue(0);

      await deliver(h(), message(h(), placed('ord-ok')), message(h(), placed('ord-fail'), { receiveCount: 4 }));

      expect(visibilityChanges(h()).map((v) => v.VisibilityTimeout)).toEqual([8]);
    });

    test('a failure to set the backoff does not hide the original failure', async () => {
      const table = new FakeEffectsTable(h());
      table.failFor.set('ord-fail.placed', throttled(h()));
      h().sqs.on(h().sqsSdk.ChangeMessageVisibilityCommand).rejects(new Error('SQS unavailable'));
      const failing = message(h(), placed('ord-fail'));

      const response = await deliver(h(), message(h(), placed('ord-ok')), failing);

      expect(failedIds(response)).toEqual([failing.messageId]);
    });

    test('a batch in which every record fails reports each as a batch item failure, and does not throw', async () => {
      const table = new FakeEffectsTable(h());
      table.failFor.set('ord-fail.placed', throttled(h()));
      const failing = message(h(), placed('ord-fail'));

      const response = await deliver(h(), failing);

      expect(failedIds(response)).toEqual([failing.messageId]);
      expect(visibilityChanges(h())).toHaveLength(1);
    });

    test('the provider failing after the commit is transient; the redelivery is a duplicate and calls the provider again, same key', async () => {
      const table = new FakeEffectsTable(h());
      const event = placed('ord-1');
      h()
        .doc.on(h().docSdk.UpdateCommand, { Key: { idempotencyKey: `${name}:${event.eventId}` } })
        .rejectsOnce(new Error('provider timeout'))
        .resolves({});
      const first = message(h(), event, { messageId: 'm-first' });

      const firstResponse = await deliver(h(), message(h(), placed('ord-other')), first);
      const redelivery = await deliver(h(), message(h(), event, { messageId: 'm-first', receiveCount: 2 }));

      expect(failedIds(firstResponse)).toEqual(['m-first']);
      expect(redelivery.batchItemFailures).toEqual([]);
      expect(table.commits).toBe(2); // ord-1 once, ord-other once
      expect(providerKeys(h()).filter((k) => k === `${name}:${event.eventId}`)).toHaveLength(2);
      if (name === 'loyalty') expect(table.points(event.payload.customerId)).toBe(19);
      else expect(table.reserved('SKU-A')).toBe(6); // 3 for ord-1 + 3 for ord-other, each once
    });
  });

  describe('an event older than the dedupe horizon is dead-lettered, never applied', () => {
    const DAY = 86_400_000;
    const aged = (orderId: string, ageMs: number): OrderPlacedEvent => ({
      ...placed(orderId),
      occurredAt: new Date(Date.now() - ageMs).toISOString(),
    });

    test('60 days old: DLQ with cause DedupeHorizonPassed, acked; no transaction, no provider call', async () => {
      const old = message(h(), aged('ord-old', 60 * DAY), { messageId: 'm-old' });
      const young = message(h(), aged('ord-young', HORIZON_FOR_TESTS * 1000 - DAY), { messageId: 'm-young' });

      const response = await deliver(h(), old, young);

      expect(response.batchItemFailures).toEqual([]);
      expect(claimedEventIds(h())).toEqual(['ord-young.placed']);
      expect(providerKeys(h())).toEqual([`${name}:ord-young.placed`]);
      expect(deadLettered(h())).toEqual([
        expect.objectContaining({
          QueueUrl: QUEUES[name].dlq,
          MessageAttributes: expect.objectContaining({
            failureCause: { DataType: 'String', StringValue: 'DedupeHorizonPassed' },
            failureMessage: { DataType: 'String', StringValue: expect.stringMatching(/inbox claim may have expired/) },
          }),
        }),
      ]);
    });

    test('an occurredAt that is no timestamp cannot be judged: SchemaViolation, nothing applied', async () => {
      const event = { ...placed('ord-1'), occurredAt: 'yesterday' };

      const response = await deliver(h(), message(h(), JSON.stringify(event)));

      expect(response.batchItemFailures).toEqual([]);
      expect(transactions(h())).toEqual([]);
      expect(deadLettered(h())[0].MessageAttributes?.failureCause?.StringValue).toBe('SchemaViolation');
    });
  });

  describe('a record has a deadline: a hung call fails its record, not the batch', () => {
    test('a provider that never answers: the batch answers before the timeout, the other record is acked, the hung one backs off', async () => {
      const hung = placed('ord-hung');
      h()
        .doc.on(h().docSdk.UpdateCommand, { Key: { idempotencyKey: `${name}:${hung.eventId}` } })
        .callsFake(() => new Promise(() => undefined));
      h()
        .doc.on(h().docSdk.UpdateCommand, { Key: { pk: `TRIES#${name}#m-hung` } })
        .resolves({ Attributes: { tries: 1 } });
      const records = [
        message(h(), hung, { messageId: 'm-hung' }),
        message(h(), placed('ord-ok'), { messageId: 'm-ok' }),
      ];
      const started = Date.now();

      const response = await h().handler({ Records: records }, lambdaContext(2_000));

      expect(Date.now() - started).toBeLessThan(2_000);
      expect(failedIds(response)).toEqual(['m-hung']);
      expect(visibilityChanges(h())).toEqual([
        expect.objectContaining({ ReceiptHandle: records[0].receiptHandle, VisibilityTimeout: expect.any(Number) }),
      ]);
      expect(metricNames(h()).sort()).toEqual(['EffectApplied', 'TransientFailure']);
      // FIFO counts its own tries: the hung try was counted.
      if (name === 'fulfilment')
        expect(
          h()
            .doc.commandCalls(h().docSdk.UpdateCommand)
            .some((c) => c.args[0].input.Key?.pk === `TRIES#${name}#m-hung`),
        ).toBe(true);
    });
  });

  describe('the failure path is bounded too: a hung DLQ send cannot lose the batch answer', () => {
    test('a poison record whose DLQ copy never completes is reported failed before the timeout; the other is acked', async () => {
      h()
        .sqs.on(h().sqsSdk.SendMessageCommand, { QueueUrl: QUEUES[name].dlq })
        .callsFake(() => new Promise(() => undefined));
      const records = [
        message(h(), '{"not": "an order event"}', { messageId: 'm-poison' }),
        message(h(), placed('ord-ok'), { messageId: 'm-ok' }),
      ];
      const started = Date.now();

      const response = await h().handler({ Records: records }, lambdaContext(2_000));

      expect(Date.now() - started).toBeLessThan(2_000);
      // Not acked: the message stays on its queue and comes back, to be dead-lettered then.
      expect(failedIds(response)).toEqual(['m-poison']);
      expect(providerKeys(h())).toEqual([`${name}:ord-ok.placed`]);
    });
  });

  describe('provider calls: one at a time per event, and the done-mark retried on its own', () => {
    test('a copy delivered while the first is mid-call finds the lease held: it fails for later and calls nothing', async () => {
      const table = new FakeEffectsTable(h());
      const event = placed('ord-1');
      let answer: () => void = () => undefined;
      h()
        .doc.on(h().docSdk.UpdateCommand, { Key: { idempotencyKey: `${name}:${event.eventId}` } })
        .callsFakeOnce(() => new Promise((resolve) => (answer = () => resolve({}))))
        .resolves({});

      const first = deliver(h(), message(h(), event, { messageId: 'm-first' }));
      await new Promise((r) => setTimeout(r, 50)); // the first copy is now inside its provider call
      const concurrent = await deliver(h(), message(h(), event, { messageId: 'm-copy' }));
      answer();
      const firstResponse = await first;
      const later = await deliver(h(), message(h(), event, { messageId: 'm-copy', receiveCount: 2 }));

      expect(failedIds(concurrent)).toEqual(['m-copy']);
      expect(firstResponse.batchItemFailures).toEqual([]);
      expect(later.batchItemFailures).toEqual([]);
      expect(providerKeys(h())).toEqual([`${name}:${event.eventId}`]);
      expect(table.commits).toBe(1);
      expect(table.inbox(event.eventId)).toMatchObject({ providerCallDoneAt: expect.any(String) });
    });

    test('a provider call that failed on its own gives its lease back, so the retry need not wait for it to lapse', async () => {
      const table = new FakeEffectsTable(h());
      const event = placed('ord-1');
      h()
        .doc.on(h().docSdk.UpdateCommand, { Key: { idempotencyKey: `${name}:${event.eventId}` } })
        .rejectsOnce(new Error('provider 503'))
        .resolves({});

      const first = await deliver(h(), message(h(), event, { messageId: 'm-1' }));
      const retry = await deliver(h(), message(h(), event, { messageId: 'm-1', receiveCount: 2 }));

      expect(failedIds(first)).toEqual(['m-1']);
      expect(leaseReleases(h())).toHaveLength(1);
      expect(retry.batchItemFailures).toEqual([]);
      expect(providerKeys(h())).toEqual([`${name}:${event.eventId}`, `${name}:${event.eventId}`]);
      expect(table.inbox(event.eventId)).toMatchObject({ providerCallDoneAt: expect.any(String) });
    });

    test('a throttled done-mark is retried alone: the provider is called once and the record is acked', async () => {
      const table = new FakeEffectsTable(h());
      const event = placed('ord-1');
      table.failDoneMarkOnce = throttled(h());

      const response = await deliver(h(), message(h(), event, { messageId: 'm-1' }));

      expect(response.batchItemFailures).toEqual([]);
      expect(providerKeys(h())).toEqual([`${name}:${event.eventId}`]);
      expect(table.commits).toBe(1);
      expect(table.inbox(event.eventId)).toMatchObject({ providerCallDoneAt: expect.any(String) });
    });
  });

  test('every record reports its receive count, applied or failed: a rising mean is the first sign of tries outliving the visibility timeout', async () => {
    const first = message(h(), placed('ord-1'), { receiveCount: 1 });
    const fourth = message(h(), placed('ord-2'), { receiveCount: 4 });

    await deliver(h(), first, fourth);

    expect(receiveCounts(h()).sort()).toEqual([1, 4]);
  });

  describe('duplicates: only the claim condition means "already done"', () => {
    test('the claim cancelled with ConditionalCheckFailed is a duplicate: acked, effect not repeated, provider still called with the key', async () => {
      const event = placed('ord-1');
      const itemCount = name === 'loyalty' ? 2 : 4;
      h().doc.on(h().docSdk.TransactWriteCommand).rejects(claimTaken(h(), itemCount));

      const response = await deliver(h(), message(h(), event));

      expect(response.batchItemFailures).toEqual([]);
      expect(transactions(h())).toHaveLength(1);
      expect(providerKeys(h())).toEqual([`${name}:${event.eventId}`]);
      expect(metricNames(h())).toEqual(['DuplicateSuppressed']);
      expect(deadLettered(h())).toHaveLength(0);
      expect(visibilityChanges(h())).toHaveLength(0);
    });

    test.each([
      ['the same message twice', { messageId: 'm-1' }, { messageId: 'm-1', receiveCount: 2 }],
      ['a producer resend (new messageId)', { messageId: 'm-1' }, { messageId: 'm-2' }],
      ['a DLQ redrive (new messageId, much later)', { messageId: 'm-1' }, { messageId: 'm-redriven', receiveCount: 1 }],
    ])(
      '%s makes one effect and one provider call (the first recorded it done)',
      async (_what, firstOptions, secondOptions) => {
        const table = new FakeEffectsTable(h());
        const event = placed('ord-1');

        const first = await deliver(h(), message(h(), event, firstOptions));
        const second = await deliver(h(), message(h(), event, secondOptions));

        expect(first.batchItemFailures).toEqual([]);
        expect(second.batchItemFailures).toEqual([]);
        expect(table.commits).toBe(1);
        if (name === 'loyalty') {
          expect(table.points(event.payload.customerId)).toBe(19);
        } else {
          expect(table.reserved('SKU-A')).toBe(3);
          expect(table.reserved('SKU-B')).toBe(1);
        }
        expect(providerKeys(h())).toEqual([`${name}:${event.eventId}`]);
        expect(table.inbox(event.eventId)?.providerCallDoneAt).toEqual(expect.any(String));
        expect(metricNames(h())).toEqual(['EffectApplied', 'DuplicateSuppressed']);
      },
    );

    test('two copies of one event in the same batch, racing as on DynamoDB: one applied, the other duplicate or transient; redelivered, still one effect', async () => {
      const table = new FakeEffectsTable(h());
      table.conflicts = true;
      const event = placed('ord-1');
      const copies = [message(h(), event, { messageId: 'm-a' }), message(h(), event, { messageId: 'm-b' })];

      const response = await deliver(h(), ...copies);
      const firstOutcomes = metricNames(h()).sort();
      const failed = failedIds(response);
      const redelivery = await deliver(
        h(),
        ...failed.map((messageId) => message(h(), event, { messageId, receiveCount: 2 })),
      );

      // The loyalty consumer handles a batch in parallel, so the copies really race; FIFO handles them in turn.
      if (name === 'loyalty') expect(table.conflictsRaised).toBeGreaterThan(0);
      expect(failed.length).toBeLessThanOrEqual(1);
      expect([
        ['DuplicateSuppressed', 'EffectApplied'],
        ['EffectApplied', 'TransientFailure'],
      ]).toContainEqual(firstOutcomes);
      expect(redelivery.batchItemFailures).toEqual([]);
      expect(table.commits).toBe(1);
      if (name === 'loyalty') expect(table.points(event.payload.customerId)).toBe(19);
      else expect(table.reserved('SKU-A')).toBe(3);
      expect(new Set(providerKeys(h()))).toEqual(new Set([`${name}:${event.eventId}`]));
      expect(table.inbox(event.eventId)?.providerCallDoneAt).toEqual(expect.any(String));
    });

    test('the inbox claim is keyed by consumer and eventId, conditioned on absence, and outlives redeliveries (TTL)', async () => {
      const event = placed('ord-1');
      const before = Math.floor(Date.now() / 1000);

      await deliver(h(), message(h(), event));

      const after = Math.floor(Date.now() / 1000);
      const [claim] = transactions(h())[0];
      expect(claim.Put).toMatchObject({
        TableName: EFFECTS_TABLE,
        Item: { pk: `INBOX#${name}#${event.eventId}`, sk: 'INBOX', consumer: name, eventId: event.eventId },
        ConditionExpression: 'attribute_not_exists(pk)',
      });
      const expiresAt = Number(claim.Put?.Item?.expiresAt);
      expect(expiresAt).toBeGreaterThanOrEqual(before + INBOX_TTL_SECONDS);
      expect(expiresAt).toBeLessThanOrEqual(after + INBOX_TTL_SECONDS);
    });
  });
});

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

  test('a mixed batch reports exactly the failed message ids, and every other record is processed', async () => {
    const table = new FakeEffectsTable(h());
    table.failFor.set('ord-2.placed', throttled(h()));
    const { InternalServerError } = h().ddbSdk;
    table.failFor.set('ord-5.placed', new InternalServerError({ message: 'boom', $metadata: {} }));
    const records = [
      message(h(), placed('ord-1'), { messageId: 'm1' }),
      message(h(), placed('ord-2'), { messageId: 'm2' }),
      message(h(), 'not json', { messageId: 'm3' }),
      message(h(), placed('ord-4'), { messageId: 'm4' }),
      message(h(), placed('ord-5'), { messageId: 'm5' }),
      message(h(), cancelled('ord-6'), { messageId: 'm6' }),
      message(h(), placed('ord-7'), { messageId: 'm7' }),
    ];

    const response = await deliver(h(), ...records);

    expect(failedIds(response).sort()).toEqual(['m2', 'm5']);
    expect(table.commits).toBe(3);
    for (const orderId of ['ord-1', 'ord-4', 'ord-7']) expect(table.points(`cust-${orderId}`)).toBe(19);
    for (const orderId of ['ord-2', 'ord-5']) expect(table.points(`cust-${orderId}`)).toBeUndefined();
    expect(
      deadLettered(h())
        .map((d) => d.MessageAttributes?.failureCause?.StringValue)
        .sort(),
    ).toEqual(['SchemaViolation', 'UnsupportedEventType']);
    expect(
      visibilityChanges(h())
        .map((v) => v.ReceiptHandle)
        .sort(),
    ).toEqual([records[1].receiptHandle, records[4].receiptHandle].sort());
    expect(providerKeys(h()).sort()).toEqual(['loyalty:ord-1.placed', 'loyalty:ord-4.placed', 'loyalty:ord-7.placed']);
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
    const table = new FakeEffectsTable(h());

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
    expect(table.reserved('SKU-A')).toBe(0);
    expect(table.reserved('SKU-B')).toBe(0);
    expect(table.fulfilment('ord-1')).toMatchObject({ version: 2, state: 'RELEASED' });
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
    const table = new FakeEffectsTable(h());

    const cancel = await deliver(h(), message(h(), cancelled('ord-1')));
    const place = await deliver(h(), message(h(), placed('ord-1')));
    const cancelAgain = await deliver(h(), message(h(), cancelled('ord-1'), { receiveCount: 2 }));

    expect([cancel, place, cancelAgain].flatMap(failedIds)).toEqual([]);
    expect(table.fulfilment('ord-1')).toMatchObject({ version: 2, state: 'CANCELLED_UNRESERVED' });
    expect(table.reserved('SKU-A')).toBeUndefined();
    expect(table.reserved('SKU-B')).toBeUndefined();
    expect(metricNames(h())).toEqual(['EffectApplied', 'StaleEventIgnored', 'DuplicateSuppressed']);
    expect(providerKeys(h())).not.toContain('fulfilment:ord-1.placed');
  });

  test('place, cancel, then the place redelivered: reserved is back to 0 and stays there', async () => {
    const table = new FakeEffectsTable(h());

    await deliver(h(), message(h(), placed('ord-1')));
    await deliver(h(), message(h(), cancelled('ord-1')));
    const late = await deliver(h(), message(h(), placed('ord-1'), { receiveCount: 3 }));

    expect(late.batchItemFailures).toEqual([]);
    expect(table.reserved('SKU-A')).toBe(0);
    expect(table.reserved('SKU-B')).toBe(0);
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

  test('a permanent error goes to the FIFO DLQ in its message group with a deduplication id, and the rest of the batch carries on', async () => {
    const table = new FakeEffectsTable(h());
    const poison = message(h(), '{"type":"OrderPlaced"}', { groupId: 'ord-1', messageId: 'm-poison' });
    const next = message(h(), placed('ord-1'));

    const response = await deliver(h(), poison, next);

    expect(response.batchItemFailures).toEqual([]);
    expect(deadLettered(h())).toEqual([
      expect.objectContaining({
        QueueUrl: QUEUES.fulfilment.dlq,
        MessageGroupId: 'ord-1',
        MessageDeduplicationId: 'dlq-m-poison',
      }),
    ]);
    expect(table.reserved('SKU-A')).toBe(3);
  });

  test("FIFO: after a failure the rest of that order's group is reported failed, untried and released; other groups go on", async () => {
    const table = new FakeEffectsTable(h());
    const { InternalServerError } = h().ddbSdk;
    table.failFor.set('ord-2.placed', new InternalServerError({ message: 'boom', $metadata: {} }));
    const records = [
      message(h(), placed('ord-1'), { messageId: 'm1' }),
      message(h(), placed('ord-2'), { messageId: 'm2' }),
      message(h(), cancelled('ord-2'), { messageId: 'm3' }),
      message(h(), placed('ord-3'), { messageId: 'm4' }),
    ];

    const response = await deliver(h(), ...records);

    expect(failedIds(response)).toEqual(['m2', 'm3']);
    // m3 (same order as the failure) made no transaction and no provider call; ord-3's group was not held up.
    expect(claimedEventIds(h())).toEqual(['ord-1.placed', 'ord-2.placed', 'ord-3.placed']);
    expect(providerKeys(h())).toEqual(['fulfilment:ord-1.placed', 'fulfilment:ord-3.placed']);
    expect(deadLettered(h())).toHaveLength(0);
    // m2 gets its backoff; the untried m3 is made visible again at once (FIFO keeps it behind m2).
    const changes = visibilityChanges(h());
    expect(changes.map((v) => v.ReceiptHandle)).toEqual([records[1].receiptHandle, records[2].receiptHandle]);
    expect(changes[1].VisibilityTimeout).toBe(0);
    expect(table.reserved('SKU-A')).toBe(6);
  });

  test("FIFO: message groups run side by side, while one group's records go one at a time, in order", async () => {
    // Every transaction stays in flight for a few turns of the event loop, so overlaps show.
    const log: string[] = [];
    const inFlight = new Set<string>();
    let mostInFlight = 0;
    h()
      .doc.on(h().docSdk.TransactWriteCommand)
      .callsFake(async (input: TransactWriteCommandInput) => {
        const id = claimOf(input.TransactItems ?? []).replace('INBOX#fulfilment#', '');
        inFlight.add(id);
        mostInFlight = Math.max(mostInFlight, inFlight.size);
        log.push(`start ${id}`);
        for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
        inFlight.delete(id);
        log.push(`end ${id}`);
        return {};
      });
    const records = [
      message(h(), placed('ord-1'), { messageId: 'm1' }),
      message(h(), cancelled('ord-1'), { messageId: 'm2' }),
      message(h(), placed('ord-2'), { messageId: 'm3' }),
      message(h(), placed('ord-3'), { messageId: 'm4' }),
    ];

    const response = await deliver(h(), ...records);

    expect(response.batchItemFailures).toEqual([]);
    // The three orders' first events overlapped (one at a time, the most would be 1).
    expect(mostInFlight).toBe(3);
    // ord-1's cancel started only after its place had ended.
    expect(log.indexOf('start ord-1.cancelled')).toBeGreaterThan(log.indexOf('end ord-1.placed'));
  });

  test("FIFO: the failures of groups run side by side are reported in the batch's record order", async () => {
    const table = new FakeEffectsTable(h());
    const { InternalServerError } = h().ddbSdk;
    table.failFor.set('ord-3.placed', new InternalServerError({ message: 'boom', $metadata: {} }));
    table.failFor.set('ord-1.placed', new InternalServerError({ message: 'boom', $metadata: {} }));
    const records = [
      message(h(), placed('ord-1'), { messageId: 'm1' }),
      message(h(), placed('ord-2'), { messageId: 'm2' }),
      message(h(), placed('ord-3'), { messageId: 'm3' }),
      message(h(), cancelled('ord-1'), { messageId: 'm4' }),
      message(h(), cancelled('ord-3'), { messageId: 'm5' }),
    ];

    const response = await deliver(h(), ...records);

    expect(failedIds(response)).toEqual(['m1', 'm3', 'm4', 'm5']);
    expect(table.reserved('SKU-A')).toBe(3);
  });
});
