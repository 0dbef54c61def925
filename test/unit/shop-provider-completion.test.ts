import { DynamoDBClient, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoDbFulfilmentLedger } from '../../lambdas/shop/aws/ledgers';
import { orderCancelledEvent, orderPlacedEvent, type OrderEvent } from '../../lambdas/shop/domain/events';
import type { ExternalProvider } from '../../lambdas/exactly-once/provider/provider';
import { fulfilOrderEvent } from '../../lambdas/shop/use-cases/apply-order-events';

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
const placed = orderPlacedEvent(order, NOW.toISOString());
const cancelled = orderCancelledEvent(order, NOW.toISOString());

function recordingProvider(): ExternalProvider & { keys: string[] } {
  const keys: string[] = [];
  return { keys, send: async (key: string) => void keys.push(key) };
}

/** The cancellation DynamoDB returns when the claim's entry exists: its old image (ALL_OLD) on reason 0. */
function claimTaken(entry: Record<string, unknown>, items: number) {
  return new TransactionCanceledException({
    message: 'Transaction cancelled, please refer cancellation reasons for specific reasons [ConditionalCheckFailed]',
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

const transactions = () => doc.commandCalls(TransactWriteCommand).map((c) => c.args[0].input.TransactItems ?? []);
const commandNames = () => doc.calls().map((c) => c.args[0].constructor.name);

beforeEach(() => {
  doc.reset();
  doc.on(TransactWriteCommand).resolves({});
  doc.on(UpdateCommand).resolves({});
});

describe('fulfilment: no PICK after its CANCEL_PICK', () => {
  test('a cancel applied from RESERVED marks the OrderPlaced inbox entry superseded, in the same transaction', async () => {
    await fulfil(cancelled);

    const items = transactions()[0];
    expect(items.at(-1)?.Update).toEqual({
      TableName: TABLE,
      Key: { pk: `INBOX#fulfilment#${placed.eventId}`, sk: 'INBOX' },
      UpdateExpression: 'SET #superseded = :by, #ttl = if_not_exists(#ttl, :expires)',
      ExpressionAttributeNames: { '#superseded': 'supersededBy', '#ttl': 'expiresAt' },
      ExpressionAttributeValues: { ':by': cancelled.eventId, ':expires': Math.floor(NOW.getTime() / 1000) + 1_000 },
    });
  });

  test('a redriven OrderPlaced whose cancel was applied meanwhile: no PICK, though its call never completed', async () => {
    doc
      .on(TransactWriteCommand)
      .rejects(claimTaken(inboxEntry('fulfilment', placed.eventId, { supersededBy: cancelled.eventId }), 3));
    const warehouse = recordingProvider();

    const outcome = await fulfil(placed, warehouse);

    expect(outcome).toBe('duplicate');
    expect(warehouse.keys).toEqual([]);
    expect(commandNames()).toEqual(['TransactWriteCommand']);
  });
});
