import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import type { Context } from 'aws-lambda';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { createHash } from 'node:crypto';
import type { ConsumerSpec } from '@exactly-once/runtime/consumer-spec';
import { DynamoDbEntityEffectLedger } from '@exactly-once/runtime/aws/entity-effect-ledger';
import { DynamoDbOutboxStore } from '@exactly-once/runtime/aws/dynamodb-outbox-store';
import { idempotencyStore } from '@exactly-once/runtime/aws/idempotency-store';
import { outboxPut } from '@exactly-once/runtime/aws/outbox-table';
import { RecordingProvider } from '@exactly-once/runtime/aws/recording-provider';
import type { EventEnvelope } from '@exactly-once/runtime/envelope';
import { applyEntityEffect } from '@exactly-once/runtime/inbox/entity-effect';
import { relayOutboxEvents } from '@exactly-once/runtime/outbox/relay';
import { canonicalJson } from '@exactly-once/runtime/runtime/canonical-json';
import type { ProofDomain } from '../proof-kit/domain';
import type { PlannedRequest } from '../proof-kit/plan';
import { seededRandom } from '../proof-kit/random';
import { benchDynamoDbClient } from './client';
import { BENCH_EVENT_TYPE } from './events';
import { perSecond } from './figures';
import { CLEAN_MIX } from './pipeline';
import { runPool } from './pool';
import { countRoundTrips, describeMix, type RoundTrip } from './round-trips';
import type { BenchTables } from './tables';

/**
 * The emulator's ceiling for this design: everything the mechanism writes to DynamoDB for one entity,
 * replayed with the mechanism's own parts straight against DynamoDB Local (no Lambda, SQS or HTTP),
 * for the requests of the proof domain's plan and once per consumer the example declares. The mix is
 * not written down here: it is whatever those code paths send, counted on the client, so it follows
 * the code when the code changes. The relay's publisher is a no-op (SQS is outside the limit):
 *   create     Powertools idempotency lock (the settings of `idempotentCommand`), entity + outbox
 *              transaction, idempotency completion
 *   relay      mark dispatched
 *   consumers  per consumer: inbox claim + effect transaction (the generic entity effect), then, for a
 *              consumer whose spec names a provider, the provider log write and the done-mark; one that
 *              names none makes the claim + effect transaction alone, and is priced so
 * A domain's own effect (more items in its transaction) is not in it: the pipeline runs that, through
 * the stack's functions.
 */
export interface EntityPath {
  /** Runs every DynamoDB operation of the plan's request `n`'s entity. */
  run(n: number): Promise<void>;
  trips: RoundTrip[];
  resetTrips(): void;
  /** The create part alone (the API's DynamoDB calls per first request). */
  createTrips: () => number;
  destroy(): void;
}

const INBOX_TTL_SECONDS = 3 * 24 * 3600;
/** The entity items' partition prefix in the private entity table: any will do, nothing else reads them. */
const BENCH_ENTITY_PREFIX = 'BENCH#';
const BENCH_CALLER = 'arn:aws:iam::000000000000:user/bench';

/** Powertools sets the in-progress lock's expiry from the Lambda context; outside Lambda the bench gives it one. */
export const BENCH_LAMBDA_CONTEXT = { getRemainingTimeInMillis: () => 30_000 } as unknown as Context;

/** The creates of the proof domain's plan (new intents only), `count` of them, one caller. */
export function limitPlan(domain: ProofDomain, runId: string, count: number): PlannedRequest[] {
  return domain.buildPlan(seededRandom(17), {
    intents: count,
    mix: CLEAN_MIX,
    callers: [BENCH_CALLER],
    parties: 50,
    resources: 40,
    runId,
    entityIdOf: domain.entityIdOf,
  });
}

export function entityPath(options: {
  endpoint: string;
  region: string;
  tables: BenchTables;
  domain: ProofDomain;
  consumers: readonly ConsumerSpec[];
  plan: readonly PlannedRequest[];
}): EntityPath {
  const { tables, domain } = options;
  const client = benchDynamoDbClient(options.endpoint, options.region);
  const log = countRoundTrips(client);
  const documents = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  const outbox = new DynamoDbOutboxStore(documents, tables.entities, BENCH_ENTITY_PREFIX);
  const consumers = options.consumers.map((spec) => ({
    name: spec.name,
    ledger: new DynamoDbEntityEffectLedger(documents, {
      consumer: spec.name,
      tableName: tables.effects,
      inboxTtlSeconds: INBOX_TTL_SECONDS,
    }),
    // Only a consumer whose spec names a provider calls one: the others write no provider log and no done-mark.
    provider:
      (spec.providers ?? []).length === 0
        ? undefined
        : new RecordingProvider(documents, tables.providerLog, spec.providers![0]),
  }));
  const createOnce = idempotentCreate(documents, client, tables);
  let createTrips = 0;

  const run = async (n: number) => {
    const request = options.plan[n];
    if (request?.idempotencyKey === undefined) throw new Error(`bench: the limit's plan has no create at ${n}`);
    const entityId = domain.entityIdOf(request.caller, request.idempotencyKey);
    const event: EventEnvelope = {
      eventId: domain.createdEventIdOf(entityId),
      type: BENCH_EVENT_TYPE,
      entityId,
      version: 1,
      occurredAt: new Date().toISOString(),
      tenant: request.caller,
      payload: request.body,
    };
    const before = log.trips.length;
    await createOnce({
      scope: `${request.caller}\n${request.idempotencyKey}`,
      fingerprint: createHash('sha256')
        .update(canonicalJson({ route: `${request.method} ${request.path}`, body: request.body }))
        .digest('hex'),
      event,
      body: request.body,
    });
    createTrips = log.trips.length - before;
    const failed = await relayOutboxEvents([event], {
      publisher: { publish: async () => new Set() },
      outbox,
      now: () => new Date(),
    });
    if (failed.size > 0) throw new Error(`bench: marking ${event.eventId} dispatched failed`);
    await Promise.all(
      consumers.map(async (c) => {
        if (c.provider === undefined) return void (await c.ledger.apply(event));
        await applyEntityEffect(event, {
          consumer: c.name,
          eventTypes: [BENCH_EVENT_TYPE],
          ledger: c.ledger,
          provider: c.provider,
        });
      }),
    );
  };
  return {
    run,
    trips: log.trips,
    resetTrips: () => log.reset(),
    createTrips: () => createTrips,
    destroy: () => client.destroy(),
  };
}

export interface EmulatorLimit {
  /** Entities per second (the field names keep the shop's words: an order is the shop's entity). */
  ordersPerSecond: number;
  orders: number;
  concurrency: number;
  mix: string;
  roundTripsPerOrder: number;
  createOrderRoundTrips: number;
  /** One entity's round trips, with the capacity DynamoDB reported for each. */
  oneOrder: RoundTrip[];
}

export async function measureEmulatorLimit(options: {
  endpoint: string;
  region: string;
  tables: BenchTables;
  domain: ProofDomain;
  consumers: readonly ConsumerSpec[];
  /** Labels of the tables in the mix (`orders`, `effects`, ...). */
  label: (table: string) => string;
  orders: number;
  concurrency: number;
}): Promise<EmulatorLimit> {
  const runId = `bl${Date.now().toString(36)}`;
  // One entity alone, a warm-up pass (the emulator's JIT, not measured), then the measured pass.
  const warmUp = Math.ceil(options.orders / 4);
  const plan = limitPlan(options.domain, runId, 1 + warmUp + options.orders);
  const path = entityPath({ ...options, plan });
  try {
    await path.run(0);
    const oneOrder = path.trips.map((t) => ({ ...t }));
    const mix = describeMix(oneOrder, options.label);
    const createOrderRoundTrips = path.createTrips();
    await runPool(warmUp, options.concurrency, (i) => path.run(1 + i));
    path.resetTrips();
    const elapsedMs = await runPool(options.orders, options.concurrency, (i) => path.run(1 + warmUp + i));
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

/**
 * An idempotent create as `idempotentCommand` makes one: key = caller + Idempotency-Key, payload
 * checked by fingerprint; the entity and its outbox event in one transaction.
 */
function idempotentCreate(documents: DynamoDBDocumentClient, client: DynamoDBClient, tables: BenchTables) {
  const idempotencyConfig = new IdempotencyConfig({
    eventKeyJmesPath: 'scope',
    payloadValidationJmesPath: 'fingerprint',
    expiresAfterSeconds: 86_400,
  });
  const createOnce = makeIdempotent(
    async (input: { scope: string; fingerprint: string; event: EventEnvelope; body: unknown }) => {
      await documents.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName: tables.entities,
                Item: { pk: `${BENCH_ENTITY_PREFIX}${input.event.entityId}`, sk: 'ENTITY', request: input.body },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
            outboxPut(tables.entities, input.event, BENCH_ENTITY_PREFIX),
          ],
        }),
      );
      return { entityId: input.event.entityId };
    },
    {
      persistenceStore: idempotencyStore(tables.idempotency, client),
      config: idempotencyConfig,
      keyPrefix: 'bench-create',
    },
  );
  idempotencyConfig.registerLambdaContext(BENCH_LAMBDA_CONTEXT);
  return createOnce;
}
