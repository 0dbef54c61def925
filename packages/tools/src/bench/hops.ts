import { STACK_OUTPUTS } from '@exactly-once/runtime/stack-outputs';
import {
  BatchGetItemCommand,
  ScanCommand,
  type AttributeValue,
  type BatchGetItemCommandOutput,
  type ScanCommandOutput,
} from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { inboxKey } from '@exactly-once/runtime/aws/inbox-table';
import { ENTITY_OUTBOX } from '@exactly-once/runtime/aws/outbox-table';
import { proofDomainOf } from '../domain-parts';
import { waitForDrain } from '../proof-kit/drain';
import type { PlannedRequest } from '../proof-kit/plan';
import { acceptedIntents, consumerNames, firstCalls } from '../proof-kit/sampler';
import type { Target } from '../proof-kit/target';
import { POLL_INTERVAL_MS as STREAM_POLL_INTERVAL_MS } from '../local-runtime/sources/stream-poller';
import { eventSourceDefinitions } from '../local-runtime/template/event-sources';
import type { CfnTemplate } from '../local-runtime/template/model';
import { summarizeLatencies, type LatencySummary } from './figures';
import { drive } from '../proof-kit/drive';

/**
 * Where an effect's lag goes, at light load (one connection, a few orders a second), from the
 * timestamps the pipeline itself writes: the API's answer (accepted), the
 * outbox item's `dispatchedAt` (the relay sent it to SQS), each consumer's
 * inbox `claimedAt` (its transaction committed) and the provider log's
 * `firstCalledAt`. All are written on this machine, by one clock.
 */
export interface Hop {
  hop: string;
  lag: LatencySummary;
  waitsOn: string;
}

/** A batching window and batch size per event source, read from the template; the stream poll interval from the local poller. */
export function pollerSettings(
  template: CfnTemplate | undefined,
  consumers: readonly string[],
): { stream?: string; sqs: Record<string, string> } {
  const settings: { stream?: string; sqs: Record<string, string> } = { sqs: {} };
  const interval = STREAM_POLL_INTERVAL_MS;
  if (template === undefined) return settings;
  for (const source of eventSourceDefinitions(template).sources) {
    const window = `batching window ${source.batchingWindowSeconds} s, batch ${source.batchSize}`;
    if (source.kind === 'dynamodb')
      settings.stream = `local stream poll every ${interval} ms when idle, relay ${window}`;
    else {
      const consumer = consumers.find((c) => source.functionLogicalId.toLowerCase().includes(c.toLowerCase()));
      // SQS pollers long-poll (20 s), answered as soon as a message arrives.
      settings.sqs[consumer ?? source.functionLogicalId] = `SQS long poll, ${window}`;
    }
  }
  return settings;
}

export async function measureHops(
  target: Target,
  plan: readonly PlannedRequest[],
  template: CfnTemplate | undefined,
  drainTimeoutMs: number,
  ordersPerSecond: number,
): Promise<{ hops: Hop[]; orders: number; ordersPerSecond: number }> {
  // The proof kit's driver itself, not pipeline.ts's drivePlan: pipeline.ts reads the outbox items here.
  const driven = await drive(plan, {
    apiUrl: target.apiUrl,
    region: target.region,
    callers: target.callers,
    connections: 1,
    rate: ordersPerSecond,
  });
  await waitForDrain(target, { timeoutMs: drainTimeoutMs, pollMs: 250 });
  const accepted = acceptedIntents(plan, driven.observations, proofDomainOf(target.domain));
  const effectsTable = target.outputs[STACK_OUTPUTS.effectsTableName];
  const outboxItems = await outboxItemsOf(
    target,
    target.outputs[proofDomainOf(target.domain).entityTableOutput],
    accepted.map((a) => a.eventId),
  );
  const dispatched = new Map(
    [...outboxItems].flatMap(([id, item]) => (item.dispatchedAt === undefined ? [] : [[id, item.dispatchedAt]])),
  );
  const claimed = new Map<string, Map<string, number>>();
  for (const consumer of consumerNames(target.domain.consumers))
    claimed.set(
      consumer,
      await readTimes(
        target,
        effectsTable,
        // The inbox key holds the tenant the producer stamped on the event (the stored outbox event's).
        accepted.map((a) => ({
          id: a.eventId,
          key: inboxKey(consumer, a.eventId, outboxItems.get(a.eventId)?.tenant),
        })),
        'claimedAt',
      ),
    );
  const called = await firstCalls(
    target,
    accepted.map((a) => a.eventId),
  );

  const hops = hopsFrom({
    accepted,
    dispatched,
    claimed,
    called,
    settings: pollerSettings(template, consumerNames(target.domain.consumers)),
    consumers: consumerNames(target.domain.consumers),
    localProvider: target.outputs.LocalProviderUrl !== undefined,
  });
  return { hops, orders: accepted.length, ordersPerSecond };
}

/**
 * The hops from the times each event passed: accepted, relayed (dispatched mark), each consumer's
 * claim and, for a consumer that calls a provider, its first call.
 */
function hopsFrom({
  accepted,
  dispatched,
  claimed,
  called,
  settings,
  localProvider,
  consumers,
}: {
  accepted: readonly { eventId: string; acceptedAt: number }[];
  dispatched: ReadonlyMap<string, number>;
  claimed: ReadonlyMap<string, ReadonlyMap<string, number>>;
  called: ReadonlyMap<string, number>;
  settings: ReturnType<typeof pollerSettings>;
  /** Whether the runtime serves the providers (an HTTP call) or the recording double stands in. */
  localProvider: boolean;
  /** The domain's consumers, by name: one hop each. */
  consumers: readonly string[];
}): Hop[] {
  const gaps = (from: (eventId: string) => number | undefined, to: (eventId: string) => number | undefined) =>
    summarizeLatencies(
      accepted.flatMap((a) => {
        const start = from(a.eventId);
        const end = to(a.eventId);
        // Signed: the relay marks an event dispatched after its SQS send returns, so a consumer may claim first.
        return start === undefined || end === undefined ? [] : [end - start];
      }),
    );
  const acceptedAt = new Map(accepted.map((a) => [a.eventId, a.acceptedAt]));
  const hops: Hop[] = [
    {
      hop: 'accepted -> relayed (stream, relay, SQS send)',
      lag: gaps(
        (id) => acceptedAt.get(id),
        (id) => dispatched.get(id),
      ),
      waitsOn: settings.stream ?? 'stream source not found in the template',
    },
  ];
  for (const consumer of consumers) {
    const claims = claimed.get(consumer)!;
    hops.push({
      hop: `relayed -> ${consumer} claimed (SQS, poller, invocation, transaction)`,
      lag: gaps(
        (id) => dispatched.get(id),
        (id) => claims.get(id),
      ),
      waitsOn: `${settings.sqs[consumer] ?? 'queue source not found in the template'}; below 0: claimed before the relay's dispatched mark, written after its SQS send`,
    });
    // A consumer no provider heard from is done when its claim (and effect) committed: no call follows.
    const callsProvider = accepted.some((a) => called.has(`${consumer}:${a.eventId}`));
    if (!callsProvider) {
      hops.push({
        hop: `accepted -> ${consumer} effect, end to end`,
        lag: gaps(
          (id) => acceptedAt.get(id),
          (id) => claims.get(id),
        ),
        waitsOn: 'the sum (no provider call: the effect commits with the claim)',
      });
      continue;
    }
    hops.push(
      {
        hop: `${consumer} claimed -> provider called`,
        lag: gaps(
          (id) => claims.get(id),
          (id) => called.get(`${consumer}:${id}`),
        ),
        waitsOn: localProvider
          ? 'one HTTP call to the local provider'
          : 'one provider-log write (the recording double)',
      },
      {
        hop: `accepted -> ${consumer} effect, end to end`,
        lag: gaps(
          (id) => acceptedAt.get(id),
          (id) => called.get(`${consumer}:${id}`),
        ),
        waitsOn: 'the sum',
      },
    );
  }
  return hops;
}

/**
 * The outbox items of these events in the entity table, by event id: when the relay marked each
 * dispatched, the tenant its event carries, and the event's size as stored (what the relay sends to
 * SQS). Found by their `entity` attribute (ENTITY_OUTBOX): their partition is the entity's, whose
 * prefix only the application knows.
 */
export async function outboxItemsOf(
  target: Pick<Target, 'dynamodb'>,
  table: string,
  eventIds: readonly string[],
): Promise<Map<string, { dispatchedAt?: number; tenant?: string; eventBytes: number }>> {
  const wanted = new Set(eventIds);
  const found = new Map<string, { dispatchedAt?: number; tenant?: string; eventBytes: number }>();
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page: ScanCommandOutput = await target.dynamodb.send(
      new ScanCommand({
        TableName: table,
        FilterExpression: '#entity = :outbox',
        ExpressionAttributeNames: { '#entity': 'entity', '#event': 'event' },
        ExpressionAttributeValues: { ':outbox': { S: ENTITY_OUTBOX } },
        ProjectionExpression: 'eventId, dispatchedAt, #event',
        ExclusiveStartKey: start,
      }),
    );
    for (const raw of page.Items ?? []) {
      const item = unmarshall(raw) as { eventId?: string; dispatchedAt?: string; event?: { tenant?: string } };
      if (item.eventId === undefined || !wanted.has(item.eventId)) continue;
      found.set(item.eventId, {
        dispatchedAt: item.dispatchedAt === undefined ? undefined : Date.parse(item.dispatchedAt),
        tenant: item.event?.tenant,
        eventBytes: Buffer.byteLength(JSON.stringify(item.event)),
      });
    }
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return found;
}

/** An ISO timestamp attribute of items by key, as epoch ms by the caller's id, read in batches of 100. */
async function readTimes(
  target: Target,
  table: string,
  items: { id: string; key: { pk: string; sk: string } }[],
  attribute: string,
): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  const idOf = new Map(items.map((i) => [`${i.key.pk}\n${i.key.sk}`, i.id]));
  for (let i = 0; i < items.length; i += 100) {
    let keys: Record<string, AttributeValue>[] | undefined = items
      .slice(i, i + 100)
      .map(({ key }) => ({ pk: { S: key.pk }, sk: { S: key.sk } }));
    while (keys !== undefined && keys.length > 0) {
      const output: BatchGetItemCommandOutput = await target.dynamodb.send(
        new BatchGetItemCommand({
          RequestItems: {
            [table]: {
              Keys: keys,
              ProjectionExpression: 'pk, sk, #at',
              ExpressionAttributeNames: { '#at': attribute },
            },
          },
        }),
      );
      for (const item of output.Responses?.[table] ?? []) {
        const id = idOf.get(`${item.pk.S}\n${item.sk.S}`);
        const at = item[attribute]?.S;
        if (id !== undefined && at !== undefined) found.set(id, Date.parse(at));
      }
      keys = output.UnprocessedKeys?.[table]?.Keys;
    }
  }
  return found;
}
