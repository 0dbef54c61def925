import { inboxKey } from '../../lambdas/exactly-once/aws/inbox-table';
import { customerKey } from '../../lambdas/shop/aws/effects-table';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { consumerSpec } from '../../lambdas/shop/consumers';
import { deriveOrderId, loyaltyPoints, orderPlacedEventId } from '../../lambdas/shop/domain/order';
import { consumerOutputNames, type ConsumerSpec } from '../../lambdas/exactly-once/consumer-spec';
import type { Observation } from '../../tools/proof-kit/drive';
import type { PlannedRequest } from '../../tools/proof-kit/plan';
import type { Target } from '../../tools/proof-kit/target';
import { checkInvariants, EVENT_REPLACED, verify, type RunFacts } from '../../tools/proof-kit/verify';
import { eventFingerprint } from '../../lambdas/exactly-once/inbox/fingerprint';
import { orderPlacedEvent } from '../../lambdas/shop/domain/events';
import { forgedOrderPlaced } from '../../tooling/shop/proof';
import { EXAMPLE_CONSUMERS, unusedConsumerName } from '../support/consumer-list';

/**
 * The verification's own rules, on tables and queues the test sets (the proof
 * kit's matrix runs them against the real runtime): a run without intents must
 * not pass, and a wrong effect says which way it is off.
 */
const doc = mockClient(DynamoDBDocumentClient);
const sqs = mockClient(SQSClient);

// A third consumer the tests make up, named like no consumer on the list; its DLQ by its output name.
const AUDIT = unusedConsumerName('audit');
const AUDIT_DLQ_OUTPUT = consumerOutputNames(AUDIT).deadLetterQueueUrl;

const CALLER = 'arn:aws:iam::000000000000:user/AKIALOADTEST0001';
const RUN = 'ltunit';
const target = {
  kind: 'local',
  name: 'unit',
  region: 'us-east-1',
  apiUrl: 'http://127.0.0.1:1',
  outputs: {
    OrdersTableName: 'orders',
    EffectsTableName: 'effects',
    ProviderLogTableName: 'provider',
    LoyaltyDlqUrl: 'loyalty-dlq',
    FulfilmentDlqUrl: 'fulfilment-dlq',
    [AUDIT_DLQ_OUTPUT]: 'audit-dlq',
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

test('a run in which no POST got a 201 (zero orders, zero intents) is a violation, not 0 == 0', async () => {
  tables({});

  const verification = await verifyRun([answered(500, '{"message":"Internal server error"}')]);

  expect(verification.counts).toMatchObject({ intents: 0, entities: 0 });
  expect(verification.violations).toEqual([
    { invariant: 'orders', detail: 'no POST got a 201: a run without intents proves nothing' },
  ]);
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

// --- A third consumer on the list: verified by the generic invariant, its DLQ read, nothing named by hand. ---
describe(`with a third consumer (${AUDIT}) on the consumer list`, () => {
  const audit = { ...consumerSpec('loyalty'), name: AUDIT, eventTypes: ['OrderPlaced'] };
  const consumers = [...EXAMPLE_CONSUMERS, audit];
  const placed = orderPlacedEventId(orderId);
  const totalCents = 1000;
  const claim = (consumer: string) => ({
    pk: inboxKey(consumer, placed, CALLER).pk,
    providerCallDoneAt: '2030-01-01T00:00:09Z',
  });
  const called = (consumer: string) => ({
    idempotencyKey: `${consumer}:${placed}`,
    calls: 1,
    firstCalledAt: '2030-01-01T00:00:01Z',
    lastCalledAt: '2030-01-01T00:00:01Z',
  });
  /** One placed order, every effect right, each consumer's claim and call once, the third's included. */
  const cleanRun = () => ({
    orders: [
      {
        entity: 'ORDER',
        orderId,
        status: 'PLACED',
        caller: CALLER,
        customerId: `${RUN}-c1`,
        items: [{ sku: `${RUN}-s1`, quantity: 1 }],
        totalCents,
      },
    ],
    effects: [
      { pk: customerKey(CALLER, `${RUN}-c1`).pk, points: loyaltyPoints(totalCents) },
      { pk: `SKU#${RUN}-s1`, reserved: 1 },
      claim('fulfilment'),
      claim('loyalty'),
      claim(AUDIT),
    ],
    provider: [called('fulfilment'), called('loyalty'), called(AUDIT)],
  });
  const ok = () => [answered(201, JSON.stringify({ orderId }))];

  test('every consumer claimed the event and called its provider once: no violation', async () => {
    tables(cleanRun());

    const verification = await verifyRun(ok(), consumers);

    expect(verification.violations).toEqual([]);
  });

  test(`${AUDIT}'s missing claim is reported under the generic invariant`, async () => {
    const run = cleanRun();
    run.effects = run.effects.filter((e) => e.pk !== inboxKey(AUDIT, placed, CALLER).pk);
    tables(run);

    const verification = await verifyRun(ok(), consumers);

    expect(verification.violations).toEqual([
      {
        invariant: 'each-event-once-per-consumer',
        detail: `${AUDIT}: OrderPlaced ${placed} has no inbox claim ${inboxKey(AUDIT, placed, CALLER).pk}: never applied, or applied without its claim`,
      },
    ]);
  });

  test(`a message in ${AUDIT}'s DLQ (found by its output name ${AUDIT_DLQ_OUTPUT}) is judged`, async () => {
    tables(cleanRun());
    sqs
      .on(ReceiveMessageCommand, { QueueUrl: 'audit-dlq' })
      .resolvesOnce({ Messages: [{ MessageId: 'm1', ReceiptHandle: 'r1', Body: `{"customerId":"${RUN}-c1"}` }] })
      .resolves({ Messages: [] });

    const verification = await verifyRun(ok(), consumers);

    expect(verification.violations).toEqual([
      {
        invariant: 'dlq',
        detail: `${AUDIT} DLQ: message m1 (moved after maxReceiveCount): {"customerId":"${RUN}-c1"}`,
      },
    ]);
  });

  test('a consumer on the list whose DLQ the stack does not output is a clear error, not a skipped queue', async () => {
    tables(cleanRun());
    const { [AUDIT_DLQ_OUTPUT]: _omitted, ...outputs } = target.outputs;

    await expect(verifyRun(ok(), consumers, { ...target, outputs })).rejects.toThrow(
      `The stack has no output ${AUDIT_DLQ_OUTPUT}`,
    );
  });
});

test("a consumer's metrics are read under its spec name, hyphens included", () => {
  const verification = checkInvariants({
    runId: RUN,
    checkIntents: false,
    plan,
    observations: [],
    entityIdOf: deriveOrderId,
    isPoison: () => false,
    pendingOutbox: 0,
    metrics: { 'DuplicateSuppressed{consumer=gift-cards}': 3, 'EffectApplied{consumer=gift-cards}': 7 },
    entities: [],
    effectItems: [],
    providerItems: [],
    deadLetterQueues: [],
  });

  expect(verification.consumerMetrics['gift-cards']).toEqual({ DuplicateSuppressed: 3, EffectApplied: 7 });
  expect(verification.duplicatesSuppressed['gift-cards']).toBe(3);
});

test('one key answered 201 to two different request bodies is a replay violation: a key reused with another body must be refused', () => {
  const reused: PlannedRequest = {
    ...plan[0],
    index: 1,
    op: 'retry-sequential',
    body: { ...plan[0].body!, customerId: `${RUN}-c2` },
  };
  const firstAnswer = JSON.stringify({ orderId, customerId: `${RUN}-c1` });
  const facts = (requests: PlannedRequest[]) =>
    checkInvariants({
      runId: RUN,
      plan: requests,
      observations: [answered(201, firstAnswer), { ...answered(201, firstAnswer), index: 1, replayed: true }],
      entityIdOf: deriveOrderId,
      isPoison: () => false,
      pendingOutbox: 0,
      entities: [{ orderId, status: 'PLACED', customerId: `${RUN}-c1`, items: [], totalCents: 1000 }],
      effectItems: [],
      providerItems: [],
      deadLetterQueues: [],
    }).violations.filter((v) => v.invariant === 'replay');

  expect(facts([plan[0], reused])).toEqual([
    { invariant: 'replay', detail: `key ${CALLER} key-1: 201 for 2 different request bodies` },
  ]);
  expect(facts([plan[0], { ...plan[0], index: 1, op: 'retry-sequential' }])).toEqual([]);
});

describe('what a claim holds, and events refused as stamped in the future', () => {
  const order = {
    orderId,
    status: 'PLACED',
    caller: CALLER,
    customerId: `${RUN}-c1`,
    items: [{ sku: `${RUN}-s1`, quantity: 1, unitPriceCents: 1000 }],
    totalCents: 1000,
  };
  const produced = orderPlacedEvent(order, '2026-12-05T10:00:00.000Z');
  const forged = forgedOrderPlaced(plan[0], '2026-12-05T10:00:00.000Z')!;
  const claims = (fingerprint: string) =>
    EXAMPLE_CONSUMERS.map((c) => ({
      ...inboxKey(c.name, produced.eventId, CALLER),
      claimedAt: '2026-12-05T10:00:01.000Z',
      fingerprint,
    }));
  const judged = (effectItems: Record<string, unknown>[], deadLetterQueues: RunFacts['deadLetterQueues'] = []) =>
    checkInvariants({
      runId: RUN,
      checkIntents: false,
      plan,
      observations: [],
      entityIdOf: deriveOrderId,
      isPoison: () => false,
      pendingOutbox: 0,
      entities: [order],
      effectItems,
      providerItems: [],
      deadLetterQueues,
    }).violations;

  test("a claim holding another event under a produced event's id is reported as event-replaced, per consumer; its own content is not", () => {
    const replaced = judged(claims(eventFingerprint(forged))).filter((v) => v.invariant === EVENT_REPLACED);
    const own = judged(claims(eventFingerprint(produced))).filter((v) => v.invariant === EVENT_REPLACED);

    expect(forged.eventId).toBe(produced.eventId);
    expect(replaced.map((v) => v.detail.split(':')[0]).sort()).toEqual(EXAMPLE_CONSUMERS.map((c) => c.name).sort());
    expect(own).toEqual([]);
  });

  test('an event refused as OccurredInFuture is a finding for a person, never passed', () => {
    const refused = {
      MessageId: 'm-future',
      Body: JSON.stringify({ ...produced, occurredAt: '2026-12-06T10:00:00.000Z' }),
      MessageAttributes: { failureCause: { DataType: 'String', StringValue: 'OccurredInFuture' } },
    };

    const violations = judged(claims(eventFingerprint(produced)), [{ name: 'loyalty DLQ', messages: [refused] }]);

    expect(violations).toContainEqual({
      invariant: 'occurred-in-future',
      detail: `loyalty DLQ: message m-future: eventId ${produced.eventId} stamped 2026-12-06T10:00:00.000Z, beyond the clock-skew margin: for a person to look at`,
    });
    expect(violations.filter((v) => v.invariant === 'dlq')).toEqual([]);
  });
});
