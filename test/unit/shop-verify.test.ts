import { customerKey } from '../../lambdas/shop/aws/effects-table';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { deriveOrderId, loyaltyPoints } from '../../lambdas/shop/domain/order';
import type { ConsumerSpec } from '../../lambdas/exactly-once/consumer-spec';
import type { Observation } from '../../tools/proof-kit/drive';
import type { PlannedRequest } from '../../tools/proof-kit/plan';
import type { Target } from '../../tools/proof-kit/target';
import { verify } from '../../tools/proof-kit/verify';
import { EXAMPLE_CONSUMERS } from '../support/consumer-list';

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
