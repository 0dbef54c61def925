import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand, SetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { orderCancelledEventId, orderPlacedEventId } from '../../lambdas/shop/domain/order';
import { customerKey } from '../../lambdas/shop/aws/effects-table';
import { inboxKey } from '../../lambdas/exactly-once/aws/inbox-table';
import { signedFetch } from '../../tools/local-runtime/api/sign';
import { queueDepth, waitForDrain } from '../../tools/proof-kit/drain';
import { FAULT_SWITCH_DELAY_MS, redriveDeadLetters, setFaultPlan } from '../../tools/proof-kit/faults';
import { localCallCounters } from '../../tools/proof-kit/local-counters';
import { runLoadTest } from '../../tools/proof-kit/run';
import type { Target } from '../../tools/proof-kit/target';
import { checkProviderCalls, scan } from '../../tools/proof-kit/verify';
import { eventually } from './fixtures';
import { SMALL, useProofKitRuntime } from './proof-kit-fixture';
import { localProviderLog, providerCallItemsOf } from '../../tools/proof-kit/provider-calls';

/**
 * Outages on the local runtime, with the deployed queues' settings: a provider down long enough that
 * an order's message dead-letters before the order is cancelled (the redrive must then send nothing
 * the cancel superseded), and a consumer whose every try fails for 75 s (the retry budget must outlast
 * it). Apart from the fault matrix (proof-kit.test.ts) so the two run side by side.
 */
const kit = useProofKitRuntime('outages');
const runtimeLog = kit.runtimeLog;
let target: Target;
beforeAll(() => {
  target = kit.target(); // the kit's own beforeAll, registered first, has started it
});

describe('provider outage, then cancel, then redrive', () => {
  test('the warehouse is down until OrderPlaced dead-letters; the cancel goes through; the redriven OrderPlaced sends no PICK after CANCEL_PICK', async () => {
    const suffix = Date.now().toString(36);
    const [customerId, sku] = [`po-cust-${suffix}`, `po-sku-${suffix}`];
    const accessKeyId = target.callers[0].credentials.accessKeyId;
    const api = (method: string, route: string, body?: string, headers: Record<string, string> = {}) =>
      signedFetch(`${target.apiUrl.replace(/\/$/, '')}${route}`, { method, body, headers, accessKeyId });
    const queue = target.outputs.FulfilmentQueueUrl;
    const dlq = target.outputs.FulfilmentDlqUrl;
    const { Attributes = {} } = await target.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queue, AttributeNames: ['RedrivePolicy'] }),
    );
    const redrivePolicy = Attributes.RedrivePolicy!;
    const setMaxReceiveCount = (maxReceiveCount: number) =>
      target.sqs.send(
        new SetQueueAttributesCommand({
          QueueUrl: queue,
          Attributes: { RedrivePolicy: JSON.stringify({ ...JSON.parse(redrivePolicy), maxReceiveCount }) },
        }),
      );
    const dlqBefore = await queueDepth(target, dlq);
    // The warehouse is down (the mail service is not), and OrderPlaced dead-letters after one failed
    // attempt instead of a whole retry budget: what a long outage does, in seconds.
    const now = Date.now();
    await setFaultPlan(target, {
      providerOutageWindow: {
        from: new Date(now - 1_000).toISOString(),
        until: new Date(now + 3_600_000).toISOString(),
      },
      providerOutageProviders: ['warehouse'],
    });
    await setMaxReceiveCount(1);
    let orderId: string;
    try {
      await new Promise((r) => setTimeout(r, FAULT_SWITCH_DELAY_MS));
      const placed = await api(
        'POST',
        '/orders',
        JSON.stringify({ customerId, items: [{ sku, quantity: 2, unitPriceCents: 700 }] }),
        {
          'Idempotency-Key': `"po-${suffix}"`,
        },
      );
      expect(placed.status).toBe(201);
      orderId = ((await placed.json()) as { orderId: string }).orderId;
      await eventually(
        async () => ((await queueDepth(target, dlq)) > dlqBefore ? true : undefined),
        90_000,
        'OrderPlaced in the fulfilment DLQ',
      );
    } finally {
      await setMaxReceiveCount(JSON.parse(redrivePolicy).maxReceiveCount);
      await setFaultPlan(target, {});
    }
    await new Promise((r) => setTimeout(r, FAULT_SWITCH_DELAY_MS)); // the warehouse is back

    const cancel = await api('POST', `/orders/${orderId}/cancel`);
    const documents = DynamoDBDocumentClient.from(target.dynamodb);
    // What reached the warehouse, counted at the local provider (or the recording double's table).
    const providerLog = async () => {
      const local = await localProviderLog(target.outputs);
      const items =
        local !== undefined ? providerCallItemsOf(local) : await scan(documents, target.outputs.ProviderLogTableName);
      return new Map(items.map((i) => [String(i.idempotencyKey), i]));
    };
    const cancelPick = `fulfilment:${orderCancelledEventId(orderId)}`;
    await eventually(async () => (await providerLog()).get(cancelPick), 60_000, 'CANCEL_PICK at the warehouse');
    const redriven = await redriveDeadLetters(
      target,
      () => false,
      (body) => body.includes(orderId),
    );
    const drain = await waitForDrain(target, { timeoutMs: 120_000 });

    expect([200, 202]).toContain(cancel.status);
    expect(redriven).toBe(1);
    expect(drain.drained).toBe(true);
    const log = await providerLog();
    const effects = new Map((await scan(documents, target.outputs.EffectsTableName)).map((i) => [String(i.pk), i]));
    const pick = log.get(`fulfilment:${orderPlacedEventId(orderId)}`);
    // No PICK ever reached the warehouse: not before the cancel (it was down), not after (superseded).
    expect(pick).toBeUndefined();
    expect(log.get(cancelPick)?.calls).toBe(1);
    expect(effects.get(`SKU#${sku}`)?.reserved).toBe(0);
    expect(effects.get(`FULFILMENT#${orderId}`)).toMatchObject({ version: 2, state: 'RELEASED' });
    // The order's caller is its events' tenant: its customer's points and its inbox entries are keyed by it.
    const caller = (await scan(documents, target.outputs.OrdersTableName)).find(
      (i) => i.entity === 'ORDER' && i.orderId === orderId,
    )?.caller as string;
    expect(effects.get(customerKey(caller, customerId).pk)?.points).toBe(14);
    expect(effects.get(inboxKey('fulfilment', orderPlacedEventId(orderId), caller).pk)?.supersededBy).toBe(
      orderCancelledEventId(orderId),
    );
    expect(
      checkProviderCalls({
        entities: [{ orderId, status: 'CANCELLED', caller }],
        effects,
        // This order's keys only: the log also holds the matrix runs' calls, which other checks verify.
        providerItems: [...log.values()].filter((i) => String(i.idempotencyKey).includes(orderId)),
      }),
    ).toEqual([]);
  }, 300_000);
});
test('a consumer outage of 75 s: every message fails try after try, none is dead-lettered, no batch thrown, effects == intents', async () => {
  const logFrom = runtimeLog.lines.length;
  const since = new Date().toISOString();

  // The deployed queues and backoff (visibility as deployed): every try fails for 75 s, then the dependency is back.
  // The backoff doubles from about 2 s, so 75 s gives a message 5 or more tries.
  const results = await runLoadTest({
    target,
    profileName: 'test',
    profile: { ...SMALL, drainTimeoutMs: 300_000 },
    seed: 400,
    faults: { enabled: [], rate: 0, slowSeconds: 0, poisonPerQueue: 0, consumerOutageSeconds: 75 },
    callCounters: localCallCounters(target),
  });
  const tries = await fulfilmentTries(since);

  expect(results.verification.violations).toEqual([]);
  expect(results.passed).toBe(true);
  expect(results.injected.redriven).toBe(0); // nothing had to be brought back from a DLQ
  expect(results.verification.deadLetters.filter((d) => !d.expected)).toEqual([]);
  // Messages really failed again and again: a budget counted in receives (5, say) would have dead-lettered them.
  expect(Math.max(...tries)).toBeGreaterThanOrEqual(5);
  expect(results.verification.consumerMetrics.loyalty?.TransientFailure ?? 0).toBeGreaterThanOrEqual(SMALL.intents);
  // Every batch failed whole during the outage, and was reported record by record, never thrown
  // (other invoke errors, e.g. a cold start timing out on a loaded machine, are not this test's subject).
  const invokeErrors = runtimeLog.lines.slice(logFrom).filter((l) => l.includes('Invoke Error'));
  expect(invokeErrors.filter((l) => l.includes('FullBatchFailureError'))).toEqual([]);
}, 600_000);

/** The FIFO consumer's own count of failed tries per message (TRIES# items of the Effects table). */
async function fulfilmentTries(since: string): Promise<number[]> {
  const { Items = [] } = await target.dynamodb.send(
    new ScanCommand({
      TableName: target.outputs.EffectsTableName,
      FilterExpression: 'begins_with(pk, :tries) AND firstFailedAt >= :since',
      ExpressionAttributeValues: { ':tries': { S: 'TRIES#fulfilment#' }, ':since': { S: since } },
    }),
  );
  return Items.map((item) => Number(unmarshall(item).tries));
}
