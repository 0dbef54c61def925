import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand, SetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { consumerOutputNames, providerKey } from '@exactly-once/runtime/consumer-spec';
import { inboxKey } from '@exactly-once/runtime/aws/inbox-table';
import { signedFetch } from '@exactly-once/tools/local-runtime/api/sign';
import { queueDepth, waitForDrain } from '@exactly-once/tools/proof-kit/drain';
import { FAULT_SWITCH_DELAY_MS, redriveDeadLetters, setFaultPlan } from '@exactly-once/tools/proof-kit/faults';
import { localCallCounters } from '@exactly-once/tools/proof-kit/local-counters';
import { runLoadTest } from '@exactly-once/tools/proof-kit/run';
import type { Target } from '@exactly-once/tools/proof-kit/target';
import { checkProviderCalls, scan } from '@exactly-once/tools/proof-kit/verify';
import { localProviderLog, providerCallItemsOf } from '@exactly-once/tools/proof-kit/provider-calls';
import { PROBE_FIFO_SPEC, PROBE_SPEC } from '../exactly-once/fixtures/probe-spec';
import { PROBE_STATE_SPEC } from '../exactly-once/fixtures/probe-stack-consumers';
import { stateKey } from '../exactly-once/fixtures/probe-stateful-consumer';
import { happenedEventIdOf, undoneEventIdOf } from '../exactly-once/fixtures/probe-stack-things';
import { eventually } from './fixtures';
import { SMALL, useProofKitRuntime } from './proof-kit-fixture';
import { tooling as probeTooling } from '../support/probe-tooling';

/**
 * Outages on the local runtime, with the deployed queues' settings, on the probe app (the neutral
 * fixture's stack), so they run with the example deleted: a provider down long enough that a thing's
 * ThingHappened dead-letters at the stateful consumer before the thing is undone (the redrive must then
 * send nothing the undo superseded), and consumers whose every try fails for 75 s (the retry budget must
 * outlast it). Apart from the fault matrix (proof-kit.test.ts) so the two run side by side.
 */
const kit = useProofKitRuntime('outages', 'probe');
const runtimeLog = kit.runtimeLog;
let target: Target;
beforeAll(() => {
  target = kit.target(); // the kit's own beforeAll, registered first, has started it
});

/**
 * The stateful consumer: FIFO, ThingHappened then ThingUndone in order; its ThingUndone marks the
 * ThingHappened superseded, so a late ThingHappened owes its provider (named after it) no call.
 */
const STATEFUL = PROBE_STATE_SPEC.name;
/** The generic FIFO consumer, for the tries it counts (TRIES# items) in the consumer outage. */
const FIFO = PROBE_FIFO_SPEC.name;

describe('provider outage, then undo, then redrive', () => {
  test("the stateful consumer's provider is down until ThingHappened dead-letters; the undo goes through; the redriven ThingHappened sends no call after the undo's", async () => {
    const suffix = Date.now().toString(36);
    // A local caller's arn is the IAM user its access key id names.
    const accessKeyId = target.callers[0].arn.split('/').pop()!;
    const api = (method: string, route: string, body?: string, headers: Record<string, string> = {}) =>
      signedFetch(`${target.apiUrl.replace(/\/$/, '')}${route}`, { method, body, headers, accessKeyId });
    const queue = target.outputs[consumerOutputNames(STATEFUL).queueUrl];
    const dlq = target.outputs[consumerOutputNames(STATEFUL).deadLetterQueueUrl];
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
    // The stateful consumer's provider is down (the other consumers' are not), and ThingHappened
    // dead-letters after one failed attempt instead of a whole retry budget: what a long outage does, in seconds.
    const now = Date.now();
    await setFaultPlan(target, {
      providerOutageWindow: {
        from: new Date(now - 1_000).toISOString(),
        until: new Date(now + 3_600_000).toISOString(),
      },
      providerOutageProviders: [STATEFUL],
    });
    await setMaxReceiveCount(1);
    let thingId: string;
    try {
      await new Promise((r) => setTimeout(r, FAULT_SWITCH_DELAY_MS));
      const made = await api('POST', '/things', JSON.stringify({ ownerId: `po-owner-${suffix}`, amount: 7 }), {
        'Idempotency-Key': `"po-${suffix}"`,
      });
      expect(made.status).toBe(201);
      thingId = ((await made.json()) as { thingId: string }).thingId;
      await eventually(
        async () => ((await queueDepth(target, dlq)) > dlqBefore ? true : undefined),
        90_000,
        `ThingHappened in the ${STATEFUL} DLQ`,
      );
    } finally {
      await setMaxReceiveCount(JSON.parse(redrivePolicy).maxReceiveCount);
      await setFaultPlan(target, {});
    }
    await new Promise((r) => setTimeout(r, FAULT_SWITCH_DELAY_MS)); // the provider is back

    const undo = await api('POST', `/things/${thingId}/undo`);
    const documents = DynamoDBDocumentClient.from(target.dynamodb);
    // What reached the providers, counted at the local provider (or the recording double's table).
    const providerLog = async () => {
      const local = await localProviderLog(target.outputs);
      const items =
        local !== undefined ? providerCallItemsOf(local) : await scan(documents, target.outputs.ProviderLogTableName);
      return new Map(items.map((i) => [String(i.idempotencyKey), i]));
    };
    const [happened, undone] = [happenedEventIdOf(thingId), undoneEventIdOf(thingId)];
    const undoneCall = providerKey(STATEFUL, { eventId: undone });
    await eventually(async () => (await providerLog()).get(undoneCall), 60_000, "the undo's call at the provider");
    const redriven = await redriveDeadLetters(
      target,
      () => false,
      (body) => body.includes(thingId),
    );
    const drain = await waitForDrain(target, { timeoutMs: 120_000 });

    expect(undo.status).toBe(200);
    expect(redriven).toBe(1);
    expect(drain.drained).toBe(true);
    const log = await providerLog();
    const effects = new Map((await scan(documents, target.outputs.EffectsTableName)).map((i) => [String(i.pk), i]));
    // ThingHappened never reached the stateful consumer's provider: not before the undo (it was down),
    // not after (its inbox entry superseded by the undo, in the undo's own transaction).
    expect(log.get(providerKey(STATEFUL, { eventId: happened }))).toBeUndefined();
    expect(log.get(undoneCall)?.calls).toBe(1);
    expect(effects.get(stateKey(STATEFUL, thingId).pk)?.version).toBe(2);
    expect(effects.get(inboxKey(STATEFUL, happened).pk)?.supersededBy).toBe(undone);
    // The other consumers' providers were never down: each of their calls went through once.
    expect(log.get(providerKey(PROBE_SPEC.name, { eventId: happened }))?.calls).toBe(1);
    expect(log.get(providerKey(FIFO, { eventId: happened }))?.calls).toBe(1);
    expect(log.get(providerKey(FIFO, { eventId: undone }))?.calls).toBe(1);
    const thing = (await scan(documents, target.outputs.ThingsTableName)).find(
      (i) => i.entity === 'THING' && i.thingId === thingId,
    );
    expect(thing?.status).toBe('UNDONE');
    expect(
      checkProviderCalls(
        {
          entities: [thing!],
          effects,
          // This thing's keys only: the log also holds the other runs' calls, which other checks verify.
          providerItems: [...log.values()].filter((i) => String(i.idempotencyKey).includes(thingId)),
        },
        probeTooling.consumers,
        probeTooling.proof,
      ),
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
  const tries = await fifoTries(since);

  expect(results.verification.violations).toEqual([]);
  expect(results.passed).toBe(true);
  expect(results.injected.redriven).toBe(0); // nothing had to be brought back from a DLQ
  expect(results.verification.deadLetters.filter((d) => !d.expected)).toEqual([]);
  // Messages really failed again and again: a budget counted in receives (5, say) would have dead-lettered them.
  expect(Math.max(...tries)).toBeGreaterThanOrEqual(5);
  expect(results.verification.consumerMetrics[PROBE_SPEC.name]?.TransientFailure ?? 0).toBeGreaterThanOrEqual(
    SMALL.intents,
  );
  // Every batch failed whole during the outage, and was reported record by record, never thrown
  // (other invoke errors, e.g. a cold start timing out on a loaded machine, are not this test's subject).
  const invokeErrors = runtimeLog.lines.slice(logFrom).filter((l) => l.includes('Invoke Error'));
  expect(invokeErrors.filter((l) => l.includes('FullBatchFailureError'))).toEqual([]);
}, 600_000);

/** The FIFO consumer's own count of failed tries per message (TRIES# items of the Effects table). */
async function fifoTries(since: string): Promise<number[]> {
  const { Items = [] } = await target.dynamodb.send(
    new ScanCommand({
      TableName: target.outputs.EffectsTableName,
      FilterExpression: 'begins_with(pk, :tries) AND firstFailedAt >= :since',
      ExpressionAttributeValues: { ':tries': { S: `TRIES#${FIFO}#` }, ':since': { S: since } },
    }),
  );
  return Items.map((item) => Number(unmarshall(item).tries));
}
