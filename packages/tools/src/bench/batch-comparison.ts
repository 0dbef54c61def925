import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { HttpProvider } from '@exactly-once/runtime/aws/http-provider';
import { RecordingProvider } from '@exactly-once/runtime/aws/recording-provider';
import type { ExternalProvider } from '@exactly-once/runtime/provider/provider';
import { DEFAULT_PROVIDER_API_KEY, servedApis, startProviderEmulator } from '../local-runtime/provider';
import { driveBatches, LAMBDA_BATCH_SIZE, sqsBatches } from './batches';
import { benchDynamoDbClient } from './client';
import { buildConsumer, CONSUMER_KINDS, type BenchConsumer, type ConsumerKind } from './consumers';
import { benchEvents } from './events';
import { countDoubleEffects } from './fault-schedule';
import { perSecond, ratio } from './figures';
import { perCpuSecond } from './cpu';
import type { BenchTables } from './tables';

/**
 * The three consumers as Lambda runs them: SQS batches of 10, each batch one invocation whose records
 * run side by side, a few invocations at once, the same for each consumer. This design's consumer is
 * the mechanism's own handler (`queueConsumerHandler` around the generic entity effect); the plain and
 * Powertools-idempotency ones are Powertools' BatchProcessor around their record handlers
 * (consumers.ts). Two providers, measured in the same run:
 * - `http-50ms`: the local HTTP provider (packages/tools/src/local-runtime/provider, in this process) answering
 *   after 50 ms, called through the mechanism's HttpProvider: what a real provider's latency does to
 *   each design;
 * - `dynamodb-write`: the call is one DynamoDB write (the recording double), as cheap as the effect
 *   itself: the worst case for this design, whose own writes are then most of the work.
 * The consumers take turns in rounds, the order reversed each round, so a machine whose speed drifts
 * (other work, heat) weighs on all three alike. Messages per CPU-second count this process (the
 * consumers and the local provider) and the emulators' processes when they are reachable.
 */
export const PROVIDER_SETTINGS = ['http-50ms', 'dynamodb-write'] as const;
export type ProviderSetting = (typeof PROVIDER_SETTINGS)[number];

/** How long the local provider takes to answer in the `http-50ms` setting. */
export const HTTP_PROVIDER_LATENCY_MS = 50;

/** The provider settings of the batch comparison, in the closing lines' words. */
export const PROVIDER_WORDS: Record<ProviderSetting, string> = {
  'http-50ms': `a ${HTTP_PROVIDER_LATENCY_MS} ms HTTP provider`,
  'dynamodb-write': 'a DynamoDB-write provider',
};
const INVOCATION_MS = 30_000;
const BENCH_PROVIDER = 'bench';

export interface BatchSide {
  messages: number;
  messagesPerSecond: number;
  /** Per CPU-second of this process and the emulators; 0 when not measured. */
  messagesPerCpuSecond: number;
  /**
   * Per CPU-second of this process alone (process.cpuUsage): the consumers' own work, the part a Lambda
   * function pays for, with the emulators' (DynamoDB's) left out. The local provider runs here too.
   */
  messagesPerProcessCpuSecond: number;
  /** The consumer's own DynamoDB round trips per message (the provider's write, if any, left out). */
  roundTripsPerMessage: number;
  /** Records its handler reported failed; effects applied twice or not at all (each message once expected). */
  failed: number;
  double: number;
  missing: number;
}

export interface BatchSetting {
  provider: ProviderSetting;
  sides: Record<ConsumerKind, BatchSide>;
}

export interface BatchComparison {
  batchSize: number;
  /** Invocations in flight at once, for every consumer. */
  concurrency: number;
  rounds: number;
  messagesPerRound: number;
  settings: BatchSetting[];
}

export async function compareInBatches(options: {
  endpoint: string;
  region: string;
  tables: BenchTables;
  /** Messages per consumer per round. */
  messages: number;
  rounds: number;
  /** Invocations in flight at once. */
  concurrency: number;
  batchSize?: number;
  settings?: readonly ProviderSetting[];
  /** CPU seconds used so far by the bench and the emulators, if measurable. */
  cpuSeconds?: () => number | undefined;
}): Promise<BatchComparison> {
  const batchSize = options.batchSize ?? LAMBDA_BATCH_SIZE;
  const local = await startProviderEmulator({
    apis: servedApis([{ providers: [BENCH_PROVIDER] }], {}),
    latencyMs: HTTP_PROVIDER_LATENCY_MS,
  });
  const recorder = benchDynamoDbClient(options.endpoint, options.region);
  try {
    const settings: BatchSetting[] = [];
    for (const setting of options.settings ?? PROVIDER_SETTINGS) {
      const runId = `bb${Date.now().toString(36)}${setting === 'http-50ms' ? 'h' : 'd'}`;
      const provider = (kind: ConsumerKind): ExternalProvider =>
        setting === 'http-50ms'
          ? new HttpProvider({
              name: BENCH_PROVIDER,
              endpoint: local.endpoints[BENCH_PROVIDER],
              apiKey: () => DEFAULT_PROVIDER_API_KEY,
            })
          : new RecordingProvider(
              DynamoDBDocumentClient.from(recorder),
              options.tables.providerLog,
              `bench-${kind}-provider`,
            );
      const consumers = CONSUMER_KINDS.map((kind) =>
        buildConsumer(kind, {
          ...options,
          runId: `${runId}${kind}`,
          invocationMs: INVOCATION_MS,
          provider: provider(kind),
        }),
      );
      try {
        settings.push({
          provider: setting,
          sides: await measureSetting(consumers, runId, batchSize, {
            ...options,
            providerLog: options.tables.providerLog,
          }),
        });
      } finally {
        for (const c of consumers) c.destroy();
      }
    }
    return {
      batchSize,
      concurrency: options.concurrency,
      rounds: options.rounds,
      messagesPerRound: options.messages,
      settings,
    };
  } finally {
    recorder.destroy();
    await local.stop();
  }
}

async function measureSetting(
  consumers: BenchConsumer[],
  runId: string,
  batchSize: number,
  options: {
    messages: number;
    rounds: number;
    concurrency: number;
    providerLog: string;
    cpuSeconds?: () => number | undefined;
  },
): Promise<Record<ConsumerKind, BatchSide>> {
  const totals = new Map(
    consumers.map((c) => [
      c.kind,
      { ms: 0, cpu: 0 as number | undefined, own: 0, trips: 0, failed: 0, entityIds: [] as string[] },
    ]),
  );
  let offset = 0;
  // One warm-up round, not counted (the emulator's JIT, every client's sockets, the provider's first keys).
  for (let round = 0; round <= options.rounds; round++) {
    const order = round % 2 === 0 ? consumers : [...consumers].reverse();
    for (const c of order) {
      const events = benchEvents(`${runId}${c.kind}`, options.messages, offset);
      const batches = sqsBatches(events, batchSize, `${runId}-${c.kind}-r${round}`);
      c.log.reset();
      const cpuBefore = options.cpuSeconds?.();
      const ownBefore = process.cpuUsage();
      const report = await driveBatches(c.batchHandler, batches, {
        concurrency: options.concurrency,
        invocationMs: INVOCATION_MS,
        requestPrefix: `${runId}-${c.kind}-r${round}`,
      });
      const own = process.cpuUsage(ownBefore);
      const cpuAfter = options.cpuSeconds?.();
      if (round === 0) continue;
      const total = totals.get(c.kind)!;
      total.ms += report.ms;
      total.own += (own.user + own.system) / 1e6;
      total.cpu =
        total.cpu === undefined || cpuBefore === undefined || cpuAfter === undefined
          ? undefined
          : total.cpu + cpuAfter - cpuBefore;
      total.trips += c.log.trips.filter((t) => !t.tables.includes(options.providerLog)).length;
      total.failed += report.failed.length;
      total.entityIds.push(...events.map((e) => e.entityId));
    }
    offset += options.messages;
  }
  const sides = {} as Record<ConsumerKind, BatchSide>;
  for (const c of consumers) {
    const total = totals.get(c.kind)!;
    const messages = total.entityIds.length;
    const counted = countDoubleEffects(
      total.entityIds.map((key) => ({ key, amount: 1 })),
      await c.countsOf(total.entityIds),
    );
    sides[c.kind] = {
      messages,
      messagesPerSecond: perSecond(messages, total.ms),
      messagesPerCpuSecond: perCpuSecond(messages, total.cpu),
      messagesPerProcessCpuSecond: perCpuSecond(messages, total.own),
      roundTripsPerMessage: ratio(total.trips, messages),
      failed: total.failed,
      ...counted,
    };
  }
  return sides;
}
