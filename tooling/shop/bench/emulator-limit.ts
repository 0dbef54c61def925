import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import type { Context } from 'aws-lambda';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createHash } from 'node:crypto';
import { DynamoDbFulfilmentLedger, DynamoDbLoyaltyLedger } from '../../../lambdas/shop/aws/ledgers';
import { DynamoDbOrderRepository } from '../../../lambdas/shop/aws/dynamodb-order-repository';
import { DynamoDbOutboxStore } from '../../../lambdas/exactly-once/aws/dynamodb-outbox-store';
import { RecordingProvider } from '../../../lambdas/exactly-once/aws/recording-provider';
import { idempotencyStore } from '../../../lambdas/exactly-once/aws/idempotency-store';
import { canonicalJson } from '../../../lambdas/exactly-once/runtime/canonical-json';
import { orderPlacedEvent, type OrderPlacedEvent } from '../../../lambdas/shop/domain/events';
import { orderTotalCents, type PlaceOrderRequest } from '../../../lambdas/shop/domain/order';
import { creditLoyaltyPoints, fulfilOrderEvent } from '../../../lambdas/shop/use-cases/apply-order-events';
import { placeOrder } from '../../../lambdas/shop/use-cases/place-order';
import { relayOutboxEvents } from '../../../lambdas/exactly-once/outbox/relay';
import { benchDynamoDbClient } from '../../../tools/bench/client';
import { perSecond } from '../../../tools/bench/figures';
import { runPool } from '../../../tools/bench/pool';
import { countRoundTrips, describeMix, type RoundTrip } from '../../../tools/bench/round-trips';
import { ORDER_PK_PREFIX } from '../../../lambdas/shop/aws/order-table';

/**
 * The emulator's ceiling for this design: everything one order writes to
 * DynamoDB, replayed with the stack's own use cases and adapters straight
 * against DynamoDB Local (no Lambda, SQS or HTTP). The mix is not written down
 * here: it is whatever those code paths send, counted on the client, so it
 * follows the code when the code changes. The relay's publisher is a no-op
 * (SQS is outside the limit); everything else is the real path:
 *   create-order  Powertools idempotency lock, order + outbox transaction, idempotency completion
 *   relay         mark dispatched
 *   fulfilment    inbox claim + effect transaction, provider log write
 *   loyalty       inbox claim + effect transaction, provider log write
 */
export interface Tables {
  orders: string;
  idempotency: string;
  effects: string;
  providerLog: string;
}

export interface OrderPath {
  /** Runs every DynamoDB operation of one order. */
  run(n: number): Promise<void>;
  trips: RoundTrip[];
  resetTrips(): void;
  /** The create-order part alone (the API's DynamoDB calls per first request). */
  createOrderTrips: () => number;
  destroy(): void;
}

const INBOX_TTL_SECONDS = 3 * 24 * 3600;

export function orderPath(endpoint: string, region: string, tables: Tables, runId: string): OrderPath {
  const client = benchDynamoDbClient(endpoint, region);
  const log = countRoundTrips(client);
  const documents = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  const orders = new DynamoDbOrderRepository(documents, tables.orders);
  const outbox = new DynamoDbOutboxStore(documents, tables.orders, ORDER_PK_PREFIX);
  const ledgerOptions = { tableName: tables.effects, inboxTtlSeconds: INBOX_TTL_SECONDS };
  const fulfilment = {
    ledger: new DynamoDbFulfilmentLedger(documents, { ...ledgerOptions, consumer: 'fulfilment' }),
    warehouse: new RecordingProvider(documents, tables.providerLog, 'warehouse'),
  };
  const loyalty = {
    ledger: new DynamoDbLoyaltyLedger(documents, { ...ledgerOptions, consumer: 'loyalty' }),
    mail: new RecordingProvider(documents, tables.providerLog, 'mail'),
  };
  const idempotencyConfig = new IdempotencyConfig({
    eventKeyJmesPath: 'scope',
    payloadValidationJmesPath: 'fingerprint',
    expiresAfterSeconds: 3600,
  });
  // The create-order handler's idempotency settings (key = caller + Idempotency-Key, payload checked by fingerprint).
  const placeOnce = makeIdempotent(
    async (input: {
      scope: string;
      fingerprint: string;
      caller: string;
      idempotencyKey: string;
      request: PlaceOrderRequest;
    }) => placeOrder(orders, { ...input, now: new Date() }),
    {
      persistenceStore: idempotencyStore(tables.idempotency, client),
      config: idempotencyConfig,
      keyPrefix: 'bench-create-order',
    },
  );
  idempotencyConfig.registerLambdaContext(BENCH_LAMBDA_CONTEXT);
  let createOrderTrips = 0;

  const run = async (n: number) => {
    const caller = 'arn:aws:iam::000000000000:user/bench';
    const idempotencyKey = `${runId}-${n}`;
    const request: PlaceOrderRequest = benchOrder(runId, n);
    const before = log.trips.length;
    const view = await placeOnce({
      scope: `${caller}\n${idempotencyKey}`,
      fingerprint: createHash('sha256')
        .update(canonicalJson({ route: 'POST /orders', body: request }))
        .digest('hex'),
      caller,
      idempotencyKey,
      request,
    });
    createOrderTrips = log.trips.length - before;
    const event: OrderPlacedEvent = orderPlacedEvent(
      { ...view, totalCents: orderTotalCents(view.items) },
      view.createdAt,
    );
    const failed = await relayOutboxEvents([event], {
      publisher: { publish: async () => new Set() },
      outbox,
      now: () => new Date(),
    });
    if (failed.size > 0) throw new Error(`bench: marking ${event.eventId} dispatched failed`);
    await Promise.all([fulfilOrderEvent(event, fulfilment), creditLoyaltyPoints(event, loyalty)]);
  };
  return {
    run,
    trips: log.trips,
    resetTrips: () => log.reset(),
    createOrderTrips: () => createOrderTrips,
    destroy: () => client.destroy(),
  };
}

/** Powertools sets the in-progress lock's expiry from the Lambda context; outside Lambda the bench gives it one. */
export const BENCH_LAMBDA_CONTEXT = { getRemainingTimeInMillis: () => 30_000 } as unknown as Context;

export function benchOrder(runId: string, n: number): PlaceOrderRequest {
  return {
    customerId: `${runId}-cust-${n % 50}`,
    items: [
      { sku: `${runId}-sku-${n % 40}`, quantity: 1 + (n % 3), unitPriceCents: 1250 },
      { sku: `${runId}-sku-${(n + 7) % 40}-b`, quantity: 1, unitPriceCents: 499 },
    ],
  };
}

export interface EmulatorLimit {
  ordersPerSecond: number;
  orders: number;
  concurrency: number;
  mix: string;
  roundTripsPerOrder: number;
  createOrderRoundTrips: number;
  /** One order's round trips, with the capacity DynamoDB reported for each. */
  oneOrder: RoundTrip[];
}

export async function measureEmulatorLimit(options: {
  endpoint: string;
  region: string;
  tables: Tables;
  orders: number;
  concurrency: number;
}): Promise<EmulatorLimit> {
  const runId = `bl${Date.now().toString(36)}`;
  const path = orderPath(options.endpoint, options.region, options.tables, runId);
  try {
    // One order alone first: its round trips are the mix. Then a warm-up pass (the emulator's JIT), not measured.
    await path.run(-1);
    const oneOrder = path.trips.map((t) => ({ ...t }));
    const label = (name: string) => Object.entries(options.tables).find(([, table]) => table === name)?.[0] ?? name;
    const mix = describeMix(oneOrder, label);
    const createOrderRoundTrips = path.createOrderTrips();
    await runPool(Math.ceil(options.orders / 4), options.concurrency, (i) => path.run(options.orders + i));
    path.resetTrips();
    const elapsedMs = await runPool(options.orders, options.concurrency, (i) => path.run(i));
    return {
      ordersPerSecond: perSecond(options.orders, elapsedMs),
      orders: options.orders,
      concurrency: options.concurrency,
      mix,
      roundTripsPerOrder: path.trips.length / options.orders,
      createOrderRoundTrips,
      oneOrder,
    };
  } finally {
    path.destroy();
  }
}
