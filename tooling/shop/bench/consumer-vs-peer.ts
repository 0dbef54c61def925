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
import { DynamoDbLoyaltyLedger } from '../../../lambdas/shop/aws/ledgers';
import { customerKey } from '../../../lambdas/shop/aws/effects-table';
import { RecordingProvider } from '../../../lambdas/exactly-once/aws/recording-provider';
import { orderPlacedEvent, type OrderPlacedEvent } from '../../../lambdas/shop/domain/events';
import { loyaltyPoints, orderTotalCents } from '../../../lambdas/shop/domain/order';
import type { ExternalProvider } from '../../../lambdas/exactly-once/provider/provider';
import { creditLoyaltyPoints } from '../../../lambdas/shop/use-cases/apply-order-events';
import { unitsByTable } from '../../../tools/bench/cost-model';
import { benchDynamoDbClient } from '../../../tools/bench/client';
import { benchOrder, type Tables } from './emulator-limit';
import type { Delivery, DeliveryHooks, FaultConsumer } from '../../../tools/bench/fault-schedule';
import { perSecond } from '../../../tools/bench/figures';
import { runPool } from '../../../tools/bench/pool';
import { countRoundTrips, type RoundTripLog } from '../../../tools/bench/round-trips';

/**
 * Three loyalty consumers over the same Effects table, each doing the same
 * effect (`ADD points` on the customer) and the same provider call (the mail,
 * through the provider log), built here and nowhere else:
 * - plain: what a user writes first, at-least-once: the effect, the call, then ack;
 * - Powertools: `makeIdempotent` around that handler (lock, effect, call, completion
 *   record), its records in the same table keyed pk/sk as Powertools allows;
 * - this design: the loyalty use case (inbox claim + effect in one transaction,
 *   the call, the done-mark), with the real consumer's provider-call lease.
 * Each writes its own customer items (`<customer>-plain`, `<customer>-powertools`,
 * `<customer>`), so the effect state of each can be read back apart.
 *
 * Round trips and write units per message count the consumer's own DynamoDB
 * requests; the provider log write stands in for an external provider's API
 * (every side makes it once per first delivery) and is reported separately.
 */
export const CONSUMER_KINDS = ['plain', 'powertools', 'ours'] as const;
export type ConsumerKind = (typeof CONSUMER_KINDS)[number];

export interface BenchConsumer {
  kind: ConsumerKind;
  consume: FaultConsumer<OrderPlacedEvent>;
  log: RoundTripLog;
  client: DynamoDBClient;
  /** Points on each customer's item of this consumer, by customer id. */
  pointsOf(customerIds: readonly string[]): Promise<Map<string, number>>;
  destroy(): void;
}

const NO_HOOKS: DeliveryHooks = { afterEffect: async () => undefined };

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
  options: { endpoint: string; region: string; tables: Tables; runId: string; invocationMs: number },
): BenchConsumer {
  const client = benchDynamoDbClient(options.endpoint, options.region);
  const log = countRoundTrips(client);
  const docs = DynamoDBDocumentClient.from(client);
  const table = options.tables.effects;
  const itemOf = (customerId: string) => (kind === 'ours' ? customerId : `${customerId}-${kind}`);
  const mail = new RecordingProvider(docs, options.tables.providerLog, `bench-${kind}-mail`);

  // The plain handler: the effect, the hook, the call. Powertools wraps exactly this.
  const plain = async (event: OrderPlacedEvent, hooks: DeliveryHooks) => {
    const points = loyaltyPoints(event.payload.totalCents);
    await docs.send(
      new UpdateCommand({
        TableName: table,
        Key: customerKey(event.tenant, itemOf(event.payload.customerId)),
        UpdateExpression: 'SET customerId = :id ADD points :points',
        ExpressionAttributeValues: { ':id': event.payload.customerId, ':points': points },
      }),
    );
    await hooks.afterEffect();
    await mail.send(`${kind}-loyalty:${event.eventId}`, {
      customerId: event.payload.customerId,
      orderId: event.entityId,
      pointsEarned: points,
    });
    return { points };
  };

  let consume: FaultConsumer<OrderPlacedEvent>;
  if (kind === 'plain') {
    consume = async (event, hooks) => void (await plain(event, hooks));
  } else if (kind === 'powertools') {
    const config = new IdempotencyConfig({ eventKeyJmesPath: 'eventId', expiresAfterSeconds: 3 * 24 * 3600 });
    // The in-progress lock lasts the invocation, as in Lambda (Powertools reads it from the context).
    config.registerLambdaContext({ getRemainingTimeInMillis: () => options.invocationMs } as unknown as Context);
    const wrapped = makeIdempotent(plain, {
      persistenceStore: new DynamoDBPersistenceLayer({
        tableName: table,
        awsSdkV3Client: client,
        keyAttr: 'pk',
        sortKeyAttr: 'sk',
        staticPkValue: 'POWERTOOLS',
        expiryAttr: 'expiresAt',
      }),
      config,
      keyPrefix: `bench-powertools-${options.runId}`,
    });
    consume = async (event, hooks) => void (await wrapped(event, hooks));
  } else {
    const ledger = new DynamoDbLoyaltyLedger(docs, {
      consumer: 'loyalty',
      tableName: table,
      inboxTtlSeconds: 3 * 24 * 3600,
    });
    consume = async (event, hooks, delivery: Delivery) =>
      void (await creditLoyaltyPoints(
        event,
        { ledger, mail: afterEffect(mail, hooks) },
        // As the queue consumer gives it: the lease on the provider call lasts the invocation.
        {
          // Never aborted (no deadline is enforced here), one per delivery as in the handler.
          signal: new AbortController().signal,
          deadline: delivery.invocationEndsAt,
          leaseUntil: delivery.invocationEndsAt,
          leaseHolder: delivery.id,
        },
      ));
  }

  const pointsOf = async (customerIds: readonly string[]) => {
    const found = new Map<string, number>();
    for (let i = 0; i < customerIds.length; i += 100) {
      let keys: Record<string, unknown>[] | undefined = customerIds
        .slice(i, i + 100)
        .map((id) => customerKey(undefined, itemOf(id)));
      while (keys !== undefined && keys.length > 0) {
        const output: BatchGetCommandOutput = await docs.send(
          new BatchGetCommand({ RequestItems: { [table]: { Keys: keys, ConsistentRead: true } } }),
        );
        for (const item of output.Responses?.[table] ?? [])
          found.set(String(item.customerId), Number(item.points ?? 0));
        keys = output.UnprocessedKeys?.[table]?.Keys;
      }
    }
    return found;
  };
  return { kind, consume, log, client, pointsOf, destroy: () => client.destroy() };
}

/** OrderPlaced events of the bench's loyalty orders, `offset`..`offset + count - 1`, one customer each when `ownCustomer`. */
export function benchEvents(runId: string, count: number, offset = 0, ownCustomer = false): OrderPlacedEvent[] {
  return Array.from({ length: count }, (_, i) => {
    const n = offset + i;
    const request = benchOrder(runId, n);
    const order = {
      orderId: `${runId}-order-${n}`,
      customerId: ownCustomer ? `${runId}-only-${n}` : request.customerId,
      items: request.items,
      totalCents: orderTotalCents(request.items),
    };
    return orderPlacedEvent(order, new Date().toISOString());
  });
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
  tables: Tables;
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
