import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { customerKey } from '../../lambdas/shop/aws/effects-table';
import {
  deriveOrderId,
  loyaltyPoints,
  orderCancelledEventId,
  orderPlacedEventId,
} from '../../lambdas/shop/domain/order';
import type { ConsumerSpec } from '@exactly-once/runtime/consumer-spec';
import { inboxKey } from '@exactly-once/runtime/aws/inbox-table';
import { sequencedEntityKey } from '@exactly-once/runtime/aws/sequenced-ledger';
import { providerKey } from '@exactly-once/runtime/inbox/keys';
import { tooling as shopTooling } from '../../tooling/shop';
import { picksAfterCancel, SHOP_PROOF } from '../../tooling/shop/proof';
import type { PerformedEffect, ProviderLog } from '@exactly-once/tools/local-runtime/provider';
import type { Observation } from '@exactly-once/tools/proof-kit/drive';
import type { PlannedRequest } from '@exactly-once/tools/proof-kit/plan';
import { providerLines, summarizeProviders } from '@exactly-once/tools/proof-kit/provider-calls';
import type { Target } from '@exactly-once/tools/proof-kit/target';
import {
  checkPerformedEffects,
  checkProviderCalls,
  producedEvents,
  verify,
} from '@exactly-once/tools/proof-kit/verify';
import { EXAMPLE_CONSUMERS } from '../support/consumer-list';

/**
 * The shop's own rules in the proof kit (its ProofDomain, tooling/shop/proof.ts), one area per
 * describe: its effect invariants, its provider rules and what its providers performed. The kit's
 * generic rules are tested on the neutral fixture (verify, verify-provider-calls, provider-effects,
 * report-applied).
 */

describe('the effect invariants: points and reserved stock', () => {
  /**
   * The shop's effect invariants in the proof kit's verification, on tables and queues the test sets: a
   * wrong effect (points, reserved stock) says which way it is off. The verification's generic rules are
   * tested on the neutral fixture (verify.test.ts).
   */
  const doc = mockClient(DynamoDBDocumentClient);
  const sqs = mockClient(SQSClient);

  const CALLER = 'arn:aws:iam::000000000000:user/AKIALOADTEST0001';
  const RUN = 'ltunit';
  const target = {
    kind: 'local',
    name: 'unit',
    domain: shopTooling,
    region: 'us-east-1',
    apiUrl: 'http://127.0.0.1:1',
    outputs: {
      OrdersTableName: 'orders',
      EffectsTableName: 'effects',
      ProviderLogTableName: 'provider',
      LoyaltyDlqUrl: 'loyalty-dlq',
      FulfilmentDlqUrl: 'fulfilment-dlq',
      RelayFailureQueueUrl: 'relay-failures',
    },
    callers: [],
    dynamodb: new DynamoDBClient({ region: 'us-east-1' }),
    sqs: new SQSClient({ region: 'us-east-1' }),
    faultSwitch: { file: '/dev/null' },
    close: () => undefined,
  } satisfies Target;

  const plan: PlannedRequest[] = [
    {
      index: 0,
      op: 'new',
      caller: CALLER,
      method: 'POST',
      path: '/orders',
      idempotencyKey: 'key-1',
      body: { customerId: `${RUN}-c1`, items: [{ sku: `${RUN}-s1`, quantity: 1, unitPriceCents: 1000 }] },
    },
  ];
  const orderId = deriveOrderId(CALLER, 'key-1');

  function tables(items: {
    orders?: Record<string, unknown>[];
    effects?: Record<string, unknown>[];
    provider?: Record<string, unknown>[];
  }): void {
    doc.on(ScanCommand, { TableName: 'orders' }).resolves({ Items: items.orders ?? [] });
    doc.on(ScanCommand, { TableName: 'effects' }).resolves({ Items: items.effects ?? [] });
    doc.on(ScanCommand, { TableName: 'provider' }).resolves({ Items: items.provider ?? [] });
  }

  /** The fixtures hold the example consumers' effects, claims and calls, so the verification judges those consumers. */
  const verifyRun = (
    observations: Observation[],
    consumers: readonly ConsumerSpec[] = EXAMPLE_CONSUMERS,
    on: Target = target,
  ) =>
    verify({
      target: on,
      runId: RUN,
      plan,
      observations,
      entityIdOf: deriveOrderId,
      isPoison: () => false,
      pendingOutbox: 0,
      consumers,
    });

  const answered = (status: number, body?: string): Observation => ({
    index: 0,
    status,
    body,
    replayed: false,
    startedAt: 0,
    latencyMs: 1,
  });

  beforeEach(() => {
    doc.reset();
    sqs.reset();
    sqs.on(ReceiveMessageCommand).resolves({ Messages: [] });
  });

  test('double loyalty points are reported as "more than expected", lost ones as "less than expected"', async () => {
    const totalCents = 1000;
    const order = {
      entity: 'ORDER',
      orderId,
      status: 'PLACED',
      caller: CALLER,
      customerId: `${RUN}-c1`,
      items: [{ sku: `${RUN}-s1`, quantity: 1 }],
      totalCents,
    };
    tables({
      orders: [order],
      effects: [
        { pk: customerKey(CALLER, `${RUN}-c1`).pk, points: 2 * loyaltyPoints(totalCents) },
        { pk: `SKU#${RUN}-s1`, reserved: 0 },
      ],
    });

    const verification = await verifyRun([answered(201, JSON.stringify({ orderId }))]);

    const details = verification.violations.map((v) => `${v.invariant}: ${v.detail}`);
    expect(details).toContain(
      `points: customer ${RUN}-c1 of ${CALLER}: points ${2 * loyaltyPoints(totalCents)}, more than expected ${loyaltyPoints(totalCents)}`,
    );
    expect(details).toContain(`reserved: sku ${RUN}-s1: reserved 0, less than expected 1`);
    expect(details.join('\n')).not.toContain('no POST got a 201');
  });
});

describe('the provider rules: no PICK after its CANCEL_PICK, the events an order produced', () => {
  /**
   * The shop's provider rules in the proof kit, on crafted tables: no PICK after its order's CANCEL_PICK,
   * a superseded OrderPlaced owes no PICK, and the events an order produced. The records hold the example
   * consumers' claims and calls (fulfilment's PICK and CANCEL_PICK, loyalty's call), so they are checked
   * against those consumers, whatever else the list holds. The kit's generic provider invariants are
   * tested on the neutral fixture (verify-provider-calls.test.ts).
   */

  const ORDER = 'ord-1';
  const PLACED = orderPlacedEventId(ORDER);
  const CANCELLED = orderCancelledEventId(ORDER);
  const DONE = { providerCallDoneAt: '2030-01-01T00:00:09.000Z' };

  function inbox(
    consumer: string,
    eventId: string,
    extra: Record<string, unknown> = DONE,
  ): [string, Record<string, unknown>] {
    return [`INBOX#${consumer}#${eventId}`, { pk: `INBOX#${consumer}#${eventId}`, ...extra }];
  }

  /**
   * Fulfilment's item for the order: its sequenced ledger's entity item, holding the order's state and the
   * claim of its last event (`seq`, `seqEventId`) and how many claims were made on it.
   */
  function fulfilmentItem(
    state: string,
    last: string,
    claims: number,
    caller?: string,
  ): [string, Record<string, unknown>] {
    const { pk } = sequencedEntityKey('fulfilment', { entityId: ORDER, tenant: caller });
    const seq = last === PLACED ? 1 : 2;
    return [pk, { pk, sk: 'EFFECT', state, seq, seqEventId: last, seqClaims: claims }];
  }

  function call(idempotencyKey: string, firstCalledAt: string, lastCalledAt = firstCalledAt): Record<string, unknown> {
    return { idempotencyKey, calls: firstCalledAt === lastCalledAt ? 1 : 2, firstCalledAt, lastCalledAt };
  }

  /** A cancelled order whose PICK and CANCEL_PICK both reached the warehouse, in that order. */
  function cancelledOrder() {
    return {
      entities: [{ orderId: ORDER, status: 'CANCELLED' }],
      effects: new Map([fulfilmentItem('RELEASED', CANCELLED, 2), inbox('loyalty', PLACED)]),
      providerItems: [
        call(`loyalty:${PLACED}`, '2030-01-01T00:00:01.000Z'),
        call(`fulfilment:${PLACED}`, '2030-01-01T00:00:01.000Z'),
        call(`fulfilment:${CANCELLED}`, '2030-01-01T00:00:05.000Z'),
      ],
    };
  }

  test('a clean record: PICK before CANCEL_PICK, every call recorded done: no violation', () => {
    expect(checkProviderCalls(cancelledOrder(), EXAMPLE_CONSUMERS, SHOP_PROOF)).toEqual([]);
  });

  test('a PICK made after the CANCEL_PICK reached the warehouse is a provider-order violation', () => {
    const record = cancelledOrder();
    // The PICK's key was called again (a late redrive) after the cancel went out.
    record.providerItems[1] = call(`fulfilment:${PLACED}`, '2030-01-01T00:00:01.000Z', '2030-01-01T00:00:06.000Z');

    const violations = checkProviderCalls(record, EXAMPLE_CONSUMERS, SHOP_PROOF);

    expect(violations).toEqual([
      {
        invariant: 'provider-order',
        detail: expect.stringContaining(
          `fulfilment:${PLACED} called at 2030-01-01T00:00:06.000Z, after fulfilment:${CANCELLED}`,
        ),
      },
    ]);
  });

  test('a placed order without its PICK is a violation; a cancelled one whose place was superseded before its PICK is not', () => {
    // The cancel's claim took the item's owed-call slot before the PICK went out: the PICK is owed no more.
    const superseded = cancelledOrder();
    superseded.providerItems.splice(1, 1);
    const placedOnly = {
      entities: [{ orderId: ORDER, status: 'PLACED' }],
      // Reserved (its claim is there), but the PICK never reached the warehouse.
      effects: new Map([fulfilmentItem('RESERVED', PLACED, 1), inbox('loyalty', PLACED)]),
      providerItems: [call(`loyalty:${PLACED}`, '2030-01-01T00:00:01.000Z')],
    };

    expect(checkProviderCalls(superseded, EXAMPLE_CONSUMERS, SHOP_PROOF)).toEqual([]);
    expect(checkProviderCalls(placedOnly, EXAMPLE_CONSUMERS, SHOP_PROOF)).toEqual([
      { invariant: 'provider', detail: `no provider call under key fulfilment:${PLACED}` },
    ]);
  });

  test('an order with a caller: its keys carry the tenant; its place superseded before its PICK owes none', () => {
    const caller = 'arn:aws:iam::123456789012:role/shop-client';
    const key = (consumer: string, eventId: string) => providerKey(consumer, { eventId, tenant: caller });
    const claim = (consumer: string, eventId: string, extra: Record<string, unknown> = DONE) => {
      const { pk } = inboxKey(consumer, eventId, caller);
      return [pk, { pk, ...extra }] as [string, Record<string, unknown>];
    };
    const record = {
      entities: [{ orderId: ORDER, status: 'CANCELLED', caller }],
      effects: new Map([fulfilmentItem('RELEASED', CANCELLED, 2, caller), claim('loyalty', PLACED)]),
      providerItems: [
        call(key('loyalty', PLACED), '2030-01-01T00:00:01.000Z'),
        call(key('fulfilment', CANCELLED), '2030-01-01T00:00:05.000Z'),
      ],
    };

    expect(checkProviderCalls(record, EXAMPLE_CONSUMERS, SHOP_PROOF)).toEqual([]);
  });

  test('a key no event of the order owes (a CANCEL_PICK for an order still placed) is a violation', () => {
    const record = cancelledOrder();
    record.entities[0].status = 'PLACED';
    record.effects.set(...fulfilmentItem('RESERVED', PLACED, 1));

    expect(checkProviderCalls(record, EXAMPLE_CONSUMERS, SHOP_PROOF)).toEqual([
      { invariant: 'provider', detail: `unexpected provider call under key fulfilment:${CANCELLED}` },
    ]);
  });

  test('the produced events: OrderPlaced for every order, OrderCancelled for a cancelled one, keyed by the order', () => {
    expect(
      producedEvents(
        [
          { orderId: 'a', status: 'PLACED' },
          { orderId: 'b', status: 'CANCELLED' },
        ],
        SHOP_PROOF,
      ),
    ).toEqual([
      { eventId: orderPlacedEventId('a'), type: 'OrderPlaced', entityId: 'a', version: 1 },
      { eventId: orderPlacedEventId('b'), type: 'OrderPlaced', entityId: 'b', version: 1 },
      { eventId: orderCancelledEventId('b'), type: 'OrderCancelled', entityId: 'b', version: 2 },
    ]);
  });
});

describe('what the providers performed: the warehouse and the mail', () => {
  /**
   * The shop's rules on what its providers performed, as the proof kit applies them: no PICK performed
   * after its order's CANCEL_PICK, and the warehouse's and the mail's lines in a run's report. The kit's
   * own view of the provider is tested on the neutral fixture (provider-effects.test.ts).
   */
  let seq = 0;
  function effect(
    endpoint: 'mail' | 'warehouse',
    key: string,
    payload: Record<string, unknown> = {},
    answer: PerformedEffect['answer'] = 'sent',
  ): PerformedEffect {
    seq += 1;
    return {
      seq,
      endpoint,
      key,
      payload,
      performedAt: new Date(Date.UTC(2030, 0, 1, 0, 0, seq)).toISOString(),
      id: `id-${seq}`,
      answer,
      traceparent: null,
    };
  }
  const counts = (requests: number, replayed = 0, inProgress = 0) => ({
    requests,
    performed: requests - replayed - inProgress,
    replayed,
    inProgress,
    payloadMismatch: 0,
    chaosRefused: 0,
  });
  function logOf(
    performed: PerformedEffect[],
    keys: ProviderLog['keys'],
    keyless: ProviderLog['keyless'] = [],
  ): ProviderLog {
    return { performed, keyless, keys, counters: {} as ProviderLog['counters'], chaos: {} };
  }

  beforeEach(() => (seq = 0));

  test('the provider lines: performed per placed order, duplicates, answers lost, calls the key absorbed, PICK after CANCEL_PICK', () => {
    const log = logOf(
      [
        effect('mail', 'loyalty:o1.placed', {}, 'dropped'),
        effect('mail', 'loyalty:o2.placed'),
        effect('warehouse', 'fulfilment:o1.placed', { instruction: 'PICK', orderId: 'o1' }),
        effect('warehouse', 'fulfilment:o1.cancelled', { instruction: 'CANCEL_PICK', orderId: 'o1' }),
        effect('warehouse', 'fulfilment:o2.placed', { instruction: 'PICK', orderId: 'o2' }),
      ],
      {
        mail: { 'loyalty:o1.placed': counts(3, 2), 'loyalty:o2.placed': counts(2, 0, 1) },
        warehouse: {
          'fulfilment:o1.placed': counts(1),
          'fulfilment:o1.cancelled': counts(1),
          'fulfilment:o2.placed': counts(1),
        },
      },
    );

    const lines = providerLines(summarizeProviders(log), 2, SHOP_PROOF);

    expect(lines).toEqual([
      'provider mail: 2 performed for 2 placed orders, 0 duplicates (keyed); 1 answers lost, 3 retried calls absorbed by the key',
      'provider warehouse: 3 performed (2 PICK, 1 CANCEL_PICK), 0 duplicates, 0 PICK after CANCEL_PICK',
    ]);
  });

  test('a key performed twice is a duplicate, and a PICK performed after its CANCEL_PICK is counted', () => {
    const log = logOf(
      [
        effect('mail', 'loyalty:o1.placed'),
        effect('mail', 'loyalty:o1.placed'),
        effect('warehouse', 'fulfilment:o1.cancelled', { instruction: 'CANCEL_PICK', orderId: 'o1' }),
        effect('warehouse', 'fulfilment:o1.placed', { instruction: 'PICK', orderId: 'o1' }),
      ],
      { mail: { 'loyalty:o1.placed': counts(2) }, warehouse: {} },
    );

    const [mail, warehouse] = summarizeProviders(log);

    expect(mail.duplicates).toBe(1);
    expect(picksAfterCancel(warehouse.effects)).toHaveLength(1);
  });

  test('a PICK performed after its order’s CANCEL_PICK is a provider-order violation', () => {
    const performed = [
      effect('warehouse', 'f:o1.cancelled', { instruction: 'CANCEL_PICK', orderId: 'o1' }),
      effect('warehouse', 'f:o1.placed', { instruction: 'PICK', orderId: 'o1' }),
    ];

    const violations = checkPerformedEffects(
      performed,
      new Set(['f:o1.cancelled', 'f:o1.placed']),
      new Set(),
      [],
      SHOP_PROOF,
    );

    expect(violations).toEqual([expect.objectContaining({ invariant: 'provider-order' })]);
  });
});
