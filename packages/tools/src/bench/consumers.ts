import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  DynamoDBDocumentClient,
  UpdateCommand,
  type BatchGetCommandOutput,
} from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import { queueConsumerHandler, type ConsumerRuntime } from '@exactly-once/runtime/consumer/queue-consumer';
import { RETRY_BUDGET } from '@exactly-once/runtime/consumer/retry-budget';
import { parseEnvelope } from '@exactly-once/runtime/envelope';
import { applyEntityEffect } from '@exactly-once/runtime/inbox/entity-effect';
import { DynamoDbEntityEffectLedger } from '@exactly-once/runtime/aws/entity-effect-ledger';
import { DynamoDbSequencedEntityEffectLedger } from '@exactly-once/runtime/aws/sequenced-entity-effect-ledger';
import { entityEffectKey } from '@exactly-once/runtime/aws/inbox-table';
import { RecordingProvider } from '@exactly-once/runtime/aws/recording-provider';
import type { EventEnvelope } from '@exactly-once/runtime/envelope';
import type { ExternalProvider } from '@exactly-once/runtime/provider/provider';
import { unitsByTable } from './cost-model';
import { powertoolsBatchHandler, type BatchHandler } from './batches';
import { benchDynamoDbClient } from './client';
import { BENCH_EVENT_TYPE, benchEvents } from './events';
import type { Delivery, DeliveryHooks, FaultConsumer } from './fault-schedule';
import { perSecond } from './figures';
import { runPool } from './pool';
import { countRoundTrips, type RoundTripLog } from './round-trips';
import type { BenchTables } from './tables';

/**
 * Four consumers over the same Effects table, each doing the same effect (one count on the event's
 * entity) and the same provider call (through the provider log), built here and nowhere else:
 * - plain: what a user writes first, at-least-once: the effect, the call, then ack;
 * - Powertools: `makeIdempotent` around that handler (lock, effect, call, completion record), its
 *   records in the same table keyed pk/sk as Powertools allows;
 * - this design on the transactional inbox (`ours`): the mechanism's generic entity effect
 *   (`applyEntityEffect`: inbox claim + effect in one transaction, the call, the done-mark), with the
 *   real consumer's provider-call lease;
 * - this design on the sequenced ledger (`sequenced`): the same generic entity effect, its claim on the
 *   entity item in one conditional UpdateItem (no inbox item, no transaction), what `new:consumer`
 *   generates for an effect on the event's own entity.
 * Each counts under a consumer name of its own (`bench-plain`, `bench-powertools`, `bench-ours`,
 * `bench-sequenced`), so the effect state of each can be read back apart. The events are the bench's own (events.ts): the
 * comparison measures the consumers, whatever the domain.
 *
 * Round trips and write units per message count the consumer's own DynamoDB
 * requests; the provider log write stands in for an external provider's API
 * (every side makes it once per first delivery) and is reported separately.
 */
export const CONSUMER_KINDS = ['plain', 'powertools', 'ours', 'sequenced'] as const;
/** The consumers of this design, each judged exactly-once by the bench (the other two are measured only). */
export const DESIGN_KINDS = ['ours', 'sequenced'] as const satisfies readonly ConsumerKind[];
export type ConsumerKind = (typeof CONSUMER_KINDS)[number];

export interface BenchConsumer {
  kind: ConsumerKind;
  consume: FaultConsumer<EventEnvelope>;
  /**
   * The same consumer as a Lambda handler of SQS batches (batches.ts): this design through the
   * mechanism's `queueConsumerHandler`, the other two through Powertools' BatchProcessor, as a user
   * writes them. Every record of a batch runs side by side; failures come back as a partial batch response.
   */
  batchHandler: BatchHandler;
  /** Records the batch handler failed, by what it did with them (`changeVisibility`, `deadLettered`). */
  batchControl: { changeVisibility: number; deadLettered: number };
  log: RoundTripLog;
  client: DynamoDBClient;
  /** The count on each entity's effect item of this consumer, by entity id (absent: never applied). */
  countsOf(entityIds: readonly string[]): Promise<Map<string, number>>;
  destroy(): void;
}

const NO_HOOKS: DeliveryHooks = { afterEffect: async () => undefined };
const INBOX_TTL_SECONDS = 3 * 24 * 3600;

/** A provider that runs the delivery's hook first: the crash point after the effect, before the call. */
function afterEffect(provider: ExternalProvider, hooks: DeliveryHooks): ExternalProvider {
  return {
    send: async (key, payload, options) => {
      await hooks.afterEffect();
      await provider.send(key, payload, options);
    },
  };
}

export function buildConsumer(
  kind: ConsumerKind,
  options: {
    endpoint: string;
    region: string;
    tables: BenchTables;
    runId: string;
    invocationMs: number;
    /** The provider every consumer calls; default one DynamoDB write to the provider log (the recording double). */
    provider?: ExternalProvider;
  },
): BenchConsumer {
  const client = benchDynamoDbClient(options.endpoint, options.region);
  const log = countRoundTrips(client);
  const docs = DynamoDBDocumentClient.from(client);
  const table = options.tables.effects;
  const consumer = `bench-${kind}`;
  const provider =
    options.provider ?? new RecordingProvider(docs, options.tables.providerLog, `bench-${kind}-provider`);

  // The plain handler: the effect (the same item and count as the generic effect's), the hook, the call.
  // Powertools wraps exactly this.
  const plain = async (event: EventEnvelope, hooks: DeliveryHooks) => {
    await docs.send(
      new UpdateCommand({
        TableName: table,
        Key: entityEffectKey(consumer, event.entityId),
        UpdateExpression: 'SET entityId = :entityId, lastEventId = :eventId ADD appliedCount :one',
        ExpressionAttributeValues: { ':entityId': event.entityId, ':eventId': event.eventId, ':one': 1 },
      }),
    );
    await hooks.afterEffect();
    await provider.send(`${consumer}:${event.eventId}`, { eventId: event.eventId, entityId: event.entityId });
    return { applied: true };
  };

  const batchControl = { changeVisibility: 0, deadLettered: 0 };
  const side: { consume: FaultConsumer<EventEnvelope>; batchHandler: BatchHandler } =
    kind === 'plain'
      ? {
          consume: async (event, hooks) => void (await plain(event, hooks)),
          batchHandler: powertoolsBatchHandler((event) => plain(event, NO_HOOKS)),
        }
      : kind === 'powertools'
        ? powertoolsConsumer(plain, { client, table, runId: options.runId, invocationMs: options.invocationMs })
        : ourConsumer({ docs, table, consumer, provider, batchControl, ledger: kind });
  const countsOf = (entityIds: readonly string[]) => effectCounts(docs, table, consumer, entityIds);
  return { kind, ...side, batchControl, log, client, countsOf, destroy: () => client.destroy() };
}

type PlainHandler = (event: EventEnvelope, hooks: DeliveryHooks) => Promise<{ applied: boolean }>;

/** Powertools' idempotency around the plain handler, one at a time and in its batch-with-idempotency pattern. */
function powertoolsConsumer(
  plain: PlainHandler,
  options: { client: DynamoDBClient; table: string; runId: string; invocationMs: number },
): { consume: FaultConsumer<EventEnvelope>; batchHandler: BatchHandler } {
  const config = new IdempotencyConfig({ eventKeyJmesPath: 'eventId', expiresAfterSeconds: INBOX_TTL_SECONDS });
  // The in-progress lock lasts the invocation, as in Lambda (Powertools reads it from the context).
  config.registerLambdaContext({ getRemainingTimeInMillis: () => options.invocationMs } as unknown as Context);
  const wrapped = makeIdempotent(plain, {
    persistenceStore: new DynamoDBPersistenceLayer({
      tableName: options.table,
      awsSdkV3Client: options.client,
      keyAttr: 'pk',
      sortKeyAttr: 'sk',
      staticPkValue: 'POWERTOOLS',
      expiryAttr: 'expiresAt',
    }),
    config,
    keyPrefix: `bench-powertools-${options.runId}`,
  });
  return {
    consume: async (event, hooks) => void (await wrapped(event, hooks)),
    // Powertools' batch-with-idempotency pattern: the lock lasts what is left of each invocation.
    batchHandler: powertoolsBatchHandler(
      (event) => wrapped(event, NO_HOOKS),
      (context) => config.registerLambdaContext(context),
    ),
  };
}

/** This design's consumer: the mechanism's generic entity effect on either ledger, one at a time and through queueConsumerHandler. */
function ourConsumer(options: {
  docs: DynamoDBDocumentClient;
  table: string;
  consumer: string;
  provider: ExternalProvider;
  batchControl: { changeVisibility: number; deadLettered: number };
  ledger: (typeof DESIGN_KINDS)[number];
}): { consume: FaultConsumer<EventEnvelope>; batchHandler: BatchHandler } {
  const { docs, table, consumer, provider, batchControl } = options;
  const ledger =
    options.ledger === 'sequenced'
      ? new DynamoDbSequencedEntityEffectLedger(docs, { consumer, tableName: table, ledger: 'sequenced' })
      : new DynamoDbEntityEffectLedger(docs, { consumer, tableName: table, inboxTtlSeconds: INBOX_TTL_SECONDS });
  const consume: FaultConsumer<EventEnvelope> = async (event, hooks, delivery: Delivery) =>
    void (await applyEntityEffect(
      event,
      { consumer, eventTypes: [BENCH_EVENT_TYPE], ledger, provider: afterEffect(provider, hooks) },
      // As the queue consumer gives it: the lease on the provider call lasts the invocation.
      {
        // Never aborted (no deadline is enforced here), one per delivery as in the handler.
        signal: new AbortController().signal,
        deadline: delivery.invocationEndsAt,
        leaseUntil: delivery.invocationEndsAt,
        leaseHolder: delivery.id,
      },
    ));
  // The consumer as a deployed one runs: its batch through queueConsumerHandler (deadlines, the
  // lease per receipt, the partial batch response), on this process's clients and no SQS: a failed
  // record's visibility change or DLQ copy is counted, not sent.
  const runtime: ConsumerRuntime = {
    settings: {
      consumer,
      control: {
        changeVisibility: async () => void batchControl.changeVisibility++,
        sendToDeadLetterQueue: async () => void batchControl.deadLettered++,
      },
      backoff: RETRY_BUDGET,
      // As the consumer's wiring sets it: a sequenced claim never expires, so no event is too old for it.
      dedupeHorizonSeconds: options.ledger === 'sequenced' ? Number.POSITIVE_INFINITY : INBOX_TTL_SECONDS - 3_600,
      now: () => new Date(),
    },
    refreshFaults: async () => undefined,
    setTimer: (ms, fire) => {
      const timer = setTimeout(fire, Math.max(0, ms));
      return () => clearTimeout(timer);
    },
    withFaults: (apply) => apply,
  };
  const batchHandler = queueConsumerHandler(runtime, {
    fifo: false,
    parse: parseEnvelope,
    apply: (event, _record, work) =>
      applyEntityEffect(event, { consumer, eventTypes: [BENCH_EVENT_TYPE], ledger, provider }, work),
  });
  return { consume, batchHandler };
}

/** The count on each entity's effect item of a consumer, by entity id (absent: never applied). */
async function effectCounts(
  docs: DynamoDBDocumentClient,
  table: string,
  consumer: string,
  entityIds: readonly string[],
): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  for (let i = 0; i < entityIds.length; i += 100) {
    let keys: Record<string, unknown>[] | undefined = entityIds
      .slice(i, i + 100)
      .map((id) => entityEffectKey(consumer, id));
    while (keys !== undefined && keys.length > 0) {
      const output: BatchGetCommandOutput = await docs.send(
        new BatchGetCommand({ RequestItems: { [table]: { Keys: keys, ConsistentRead: true } } }),
      );
      for (const item of output.Responses?.[table] ?? [])
        found.set(String(item.entityId), Number(item.appliedCount ?? 0));
      keys = output.UnprocessedKeys?.[table]?.Keys;
    }
  }
  return found;
}

export interface ConsumerSide {
  messagesPerSecond: { first: number; duplicate: number };
  roundTripsPerMessage: { first: number; duplicate: number };
  writeUnitsPerMessage: { first: number; duplicate: number };
  providerCallsPerMessage: { first: number; duplicate: number };
  /** Wall-clock ms of the first-delivery pass (for the CPU-normalised rate). */
  firstPassMs: number;
  /** CPU seconds the bench and the emulators used during the first-delivery pass; undefined when not measured. */
  firstPassCpuSeconds?: number;
}

export interface ConsumerComparison {
  messages: number;
  concurrency: number;
  sides: Record<ConsumerKind, ConsumerSide>;
}

/** Without faults: each consumer alone, the same messages at the same concurrency, then each message again. */
export async function compareConsumers(options: {
  endpoint: string;
  region: string;
  tables: BenchTables;
  messages: number;
  concurrency: number;
  /** CPU seconds used so far by the bench and the emulators, if measurable. */
  cpuSeconds?: () => number | undefined;
}): Promise<ConsumerComparison> {
  const runId = `bc${Date.now().toString(36)}`;
  const events = benchEvents(runId, options.messages);
  // Other events, to warm the emulator's JIT and every client before anything is measured.
  const warmUp = benchEvents(runId, Math.ceil(options.messages / 4), options.messages);
  const consumers = CONSUMER_KINDS.map((kind) => buildConsumer(kind, { ...options, runId, invocationMs: 30_000 }));
  const provider = options.tables.providerLog;
  const label = (t: string) => (t === provider ? 'provider' : 'own');
  try {
    for (const c of consumers) await c.client.send(new DescribeTableCommand({ TableName: options.tables.effects }));
    for (const c of consumers)
      await runPool(warmUp.length, options.concurrency, async (i) =>
        c.consume(warmUp[i], NO_HOOKS, { id: `w${i}`, attempt: 1, invocationEndsAt: Date.now() + 30_000 }),
      );
    const sides = {} as Record<ConsumerKind, ConsumerSide>;
    for (const c of consumers) {
      const pass = async () => {
        c.log.reset();
        const cpuBefore = options.cpuSeconds?.();
        const ms = await runPool(events.length, options.concurrency, (i) =>
          c.consume(events[i], NO_HOOKS, {
            id: `m${i}-${Date.now()}`,
            attempt: 1,
            invocationEndsAt: Date.now() + 30_000,
          }),
        );
        const cpuAfter = options.cpuSeconds?.();
        const units = unitsByTable(c.log.trips, label);
        const providerTrips = c.log.trips.filter((t) => t.tables.includes(provider)).length;
        return {
          ms,
          cpu: cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore,
          rate: perSecond(events.length, ms),
          trips: (c.log.trips.length - providerTrips) / events.length,
          writeUnits: (units.own?.writeUnits ?? 0) / events.length,
          provider: providerTrips / events.length,
        };
      };
      const first = await pass();
      const duplicate = await pass();
      sides[c.kind] = {
        messagesPerSecond: { first: first.rate, duplicate: duplicate.rate },
        roundTripsPerMessage: { first: first.trips, duplicate: duplicate.trips },
        writeUnitsPerMessage: { first: first.writeUnits, duplicate: duplicate.writeUnits },
        providerCallsPerMessage: { first: first.provider, duplicate: duplicate.provider },
        firstPassMs: first.ms,
        firstPassCpuSeconds: first.cpu,
      };
    }
    return { messages: events.length, concurrency: options.concurrency, sides };
  } finally {
    for (const c of consumers) c.destroy();
  }
}
