import { ScanCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { consumerOutputNames, type ConsumerSpec } from '@exactly-once/runtime/consumer-spec';
import { queueCounts, type QueueCounts } from './drain';
import type { Observation } from './drive';
import type { ProofDomain } from './domain';
import type { PlannedRequest } from './plan';
import { percentile } from './report-statistics';
import type { EffectLagPoint, PipelineSample, PipelineSamples } from './run-results';
import type { Target } from './target';
import { consumerEventOfKey, localProviderLog, providerCallItemsOf } from './provider-calls';
import { STACK_OUTPUTS } from '@exactly-once/runtime/stack-outputs';

export type { EffectLagPoint, PipelineSample, PipelineSamples } from './run-results';

/**
 * Samples the pipeline while a proof run is under way, for the report's charts
 * over the run's time axis:
 * - per queue (sources, DLQs, the relay's failure queue): visible, in flight
 *   and delayed messages, from GetQueueAttributes;
 * - per consumer: effects applied, duplicates suppressed, transient and
 *   permanent failures, from the consumers' own metrics (locally the runtime
 *   serves their sums at /__local/stats; on AWS they are in CloudWatch and the
 *   counters are left out);
 * - marks: when the run switched phases (load done, faults off, redrive), only those that happened.
 * The calls at the local provider are charted from its log after the run (this run's keys only),
 * not sampled here.
 * Effect lag (order accepted -> effect applied) is read once at the end from
 * the provider log, where each consumer's last step records its first call.
 */
export function consumerNames(consumers: readonly { readonly name: string }[]): string[] {
  return consumers.map((c) => c.name);
}
/** Output names of the sampled queues: every consumer's source queue, then their DLQs, then the relay's failure queue. */
export function sampledQueues(consumers: readonly ConsumerSpec[]): string[] {
  return [
    ...consumers.map((c) => consumerOutputNames(c.name).queueUrl),
    ...consumers.map((c) => consumerOutputNames(c.name).deadLetterQueueUrl),
    STACK_OUTPUTS.relayFailureQueueUrl,
  ];
}
const CONSUMER_METRICS = [
  'EffectApplied',
  'OwedProviderCallCompleted',
  'DuplicateSuppressed',
  'TransientFailure',
  'PermanentFailure',
] as const;

export interface Sampler {
  mark(label: string): void;
  /** Stops sampling; with the accepted orders' event ids and acceptance times, reads the effect lag. */
  stop(accepted?: { eventId: string; acceptedAt: number }[]): Promise<PipelineSamples>;
}

/**
 * For the first {@link FAST_SECONDS} the sampler takes four samples per interval: a smoke run's load and
 * drain last a few seconds, and a sample a second would draw them as a line between two or three points.
 */
const FAST_SECONDS = 20;

/** Starts sampling once the counters' baseline is read, so what the run does is all that is counted. */
export async function startSampler(
  target: Target,
  options: { intervalMs?: number; statsUrl?: string; consumers?: readonly ConsumerSpec[] } = {},
): Promise<Sampler> {
  const sampled = sampledQueues(options.consumers ?? target.domain.consumers);
  const intervalMs = options.intervalMs ?? 1_000;
  const started = Date.now();
  const second = () => (Date.now() - started) / 1000;
  const samples: PipelineSample[] = [];
  const marks: { second: number; label: string }[] = [];
  const baseline = options.statsUrl === undefined ? undefined : await readCounters(options.statsUrl);
  let inFlight: Promise<void> = Promise.resolve();
  const takeSample = async () => {
    const at = second();
    const queues: Record<string, QueueCounts> = {};
    await Promise.all(
      sampled
        .filter((q) => target.outputs[q] !== undefined)
        .map(async (q) => {
          queues[queueName(q)] = await queueCounts(target, target.outputs[q]).catch(() => ({
            visible: 0,
            inFlight: 0,
            delayed: 0,
          }));
        }),
    );
    const sample: PipelineSample = { second: at, queues };
    if (options.statsUrl !== undefined) {
      const now = await readCounters(options.statsUrl);
      if (now !== undefined) sample.counters = subtract(now, baseline ?? {});
    }
    samples.push(sample);
  };
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const schedule = () => {
    if (stopped) return;
    const every = second() < FAST_SECONDS ? Math.max(100, intervalMs / 4) : intervalMs;
    timer = setTimeout(() => {
      inFlight = inFlight.then(takeSample).catch(() => undefined);
      schedule();
    }, every);
    timer.unref(); // a run that fails before stop() must still let the process exit
  };
  schedule();
  inFlight = takeSample().catch(() => undefined);
  return {
    mark: (label) => marks.push({ second: second(), label }),
    async stop(accepted) {
      stopped = true;
      clearTimeout(timer);
      await inFlight;
      await takeSample().catch(() => undefined);
      const effectLag =
        accepted === undefined
          ? []
          : lagOverTime(
              await firstCalls(
                target,
                accepted.map((a) => a.eventId),
              ),
              accepted,
              started,
              5,
              consumerNames(target.domain.consumers),
            );
      return {
        intervalMs,
        startedAtMs: started,
        samples: samples.sort((a, b) => a.second - b.second),
        marks,
        effectLag,
      };
    },
  };
}

/** `FulfilmentQueueUrl` -> `Fulfilment`, `FulfilmentDlqUrl` -> `Fulfilment DLQ`: the report's chart labels. */
export function queueName(output: string): string {
  return output
    .replace(/Url$/, '')
    .replace(/Queue$/, '')
    .replace(/Dlq$/, ' DLQ')
    .replace(/^RelayFailure$/, 'relay failures');
}

async function readCounters(statsUrl: string): Promise<Record<string, number> | undefined> {
  try {
    const response = await fetch(statsUrl);
    if (!response.ok) return undefined;
    const { metrics = {} } = (await response.json()) as { metrics?: Record<string, number> };
    return Object.fromEntries(
      Object.entries(metrics).filter(([name]) => CONSUMER_METRICS.some((m) => name.startsWith(`${m}{`))),
    );
  } catch {
    return undefined;
  }
}

/** Counters over a span: each one now minus its value at the base (0 when it was not there yet). */
export function subtract<T extends { [K in keyof T]: number }>(now: T, base: Partial<T>): T {
  const earlier = base as Record<string, number | undefined>;
  return Object.fromEntries(
    Object.entries(now as Record<string, number>).map(([k, v]) => [k, v - (earlier[k] ?? 0)]),
  ) as T;
}

/** The creates the API accepted (201, not a replay), by their created event's id (the shop: OrderPlaced) and acceptance time. */
export function acceptedIntents(
  plan: readonly PlannedRequest[],
  observations: readonly Observation[],
  domain: Pick<ProofDomain, 'entityIdOf' | 'createdEventIdOf'>,
): { eventId: string; acceptedAt: number }[] {
  return observations
    .filter((o) => o.status === 201 && !o.replayed && plan[o.index].idempotencyKey !== undefined)
    .map((o) => ({
      eventId: domain.createdEventIdOf(domain.entityIdOf(plan[o.index].caller, plan[o.index].idempotencyKey!)),
      acceptedAt: o.startedAt + o.latencyMs,
    }));
}

/**
 * firstCalledAt (epoch ms) by `<consumer>:<eventId>`, whatever the shape of the provider key the call
 * carried (an event with a tenant is called under `<consumer>@<tenant hash>:<eventId>`, a hash the kit
 * cannot rebuild from an event id alone): the local provider's log, or a scan of the recording double's table.
 */
export async function firstCalls(target: Target, eventIds: readonly string[]): Promise<Map<string, number>> {
  const table = target.outputs[STACK_OUTPUTS.providerLogTableName];
  const wanted = new Set(eventIds.flatMap((id) => consumerNames(target.domain.consumers).map((c) => `${c}:${id}`)));
  const found = new Map<string, number>();
  const take = (key: string, firstCalledAt: string | undefined) => {
    const byEvent = consumerEventOfKey(key);
    if (wanted.has(byEvent) && firstCalledAt !== undefined) found.set(byEvent, Date.parse(firstCalledAt));
  };
  const log = await localProviderLog(target.outputs);
  if (log !== undefined) {
    // The local provider: when each key's effect was first performed, where it happened.
    for (const item of providerCallItemsOf(log)) take(item.idempotencyKey, item.firstCalledAt);
    return found;
  }
  if (table === undefined) return found;
  let ExclusiveStartKey: Record<string, AttributeValue> | undefined;
  do {
    const page = await target.dynamodb.send(
      new ScanCommand({ TableName: table, ProjectionExpression: 'idempotencyKey, firstCalledAt', ExclusiveStartKey }),
    );
    for (const item of page.Items ?? []) take(item.idempotencyKey?.S ?? '', item.firstCalledAt?.S);
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey !== undefined);
  return found;
}

/** Effect lag percentiles per consumer, bucketed by the second the order was accepted in (5 s buckets). */
export function lagOverTime(
  applied: ReadonlyMap<string, number>,
  accepted: readonly { eventId: string; acceptedAt: number }[],
  startedAt: number,
  bucketSeconds: number,
  consumers: readonly string[],
): EffectLagPoint[] {
  const buckets = new Map<string, { second: number; consumer: string; lags: number[] }>();
  for (const { eventId, acceptedAt } of accepted) {
    const second = Math.floor((acceptedAt - startedAt) / 1000 / bucketSeconds) * bucketSeconds;
    for (const consumer of consumers) {
      const at = applied.get(`${consumer}:${eventId}`);
      if (at === undefined) continue;
      const key = `${consumer}@${second}`;
      const bucket = buckets.get(key) ?? { second, consumer, lags: [] };
      bucket.lags.push(Math.max(0, at - acceptedAt));
      buckets.set(key, bucket);
    }
  }
  return [...buckets.values()]
    .map(({ second, consumer, lags }) => {
      const sorted = lags.sort((a, b) => a - b);
      return { second, consumer, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), count: sorted.length };
    })
    .sort((a, b) => a.second - b.second || a.consumer.localeCompare(b.consumer));
}
