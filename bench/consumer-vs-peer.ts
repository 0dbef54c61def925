import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoDbLoyaltyLedger } from '../lambdas/adapters/dynamodb-ledgers';
import { customerKey } from '../lambdas/adapters/effects-table';
import { RecordingProvider } from '../lambdas/adapters/recording-provider';
import { orderPlacedEvent, type OrderPlacedEvent } from '../lambdas/domain/events';
import { loyaltyPoints, orderTotalCents } from '../lambdas/domain/order';
import { creditLoyaltyPoints } from '../lambdas/use-cases/apply-order-events';
import { BENCH_LAMBDA_CONTEXT, benchDynamoDbClient, benchOrder, type Tables } from './emulator-limit';
import { perSecond } from './figures';
import { runPool } from './pool';
import { countRoundTrips, type RoundTripLog } from './round-trips';

/**
 * This design's loyalty consumer against what a user would otherwise build:
 * Powertools' `makeIdempotent` around a handler that does the same effect as a
 * plain, non-transactional `ADD points` and the same provider call, with
 * Powertools' lock and completion records (here in the same Effects table,
 * keyed pk/sk as Powertools allows). Same messages, same concurrency, each
 * delivered twice (first delivery, then the duplicate).
 *
 * Round trips per message count the DynamoDB requests of the consumer itself;
 * the provider log write stands in for an external provider's API (both sides
 * make it once per first delivery) and is reported separately.
 */
export interface ConsumerSide {
  messagesPerSecond: { first: number; duplicate: number };
  roundTripsPerMessage: { first: number; duplicate: number };
  providerCallsPerMessage: { first: number; duplicate: number };
}

export interface ConsumerComparison {
  messages: number;
  concurrency: number;
  ours: ConsumerSide;
  peer: ConsumerSide;
}

type Consume = (event: OrderPlacedEvent) => Promise<unknown>;

export async function compareConsumers(options: {
  endpoint: string;
  region: string;
  tables: Tables;
  messages: number;
  concurrency: number;
}): Promise<ConsumerComparison> {
  const runId = `bc${Date.now().toString(36)}`;
  const makeEvents = (count: number, offset: number) =>
    Array.from({ length: count }, (_, i) => {
      const n = offset + i;
      const request = benchOrder(runId, n);
      const order = {
        orderId: `${runId}-order-${n}`,
        customerId: request.customerId,
        items: request.items,
        totalCents: orderTotalCents(request.items),
      };
      return orderPlacedEvent(order, new Date().toISOString());
    });
  const events = makeEvents(options.messages, 0);
  // Other events, to warm the emulator's JIT and both clients before anything is measured.
  const warmUp = makeEvents(Math.ceil(options.messages / 4), options.messages);
  const client = () => benchDynamoDbClient(options.endpoint, options.region);

  const oursClient = client();
  const oursLog = countRoundTrips(oursClient);
  const oursDocs = DynamoDBDocumentClient.from(oursClient);
  const oursDeps = {
    ledger: new DynamoDbLoyaltyLedger(oursDocs, {
      consumer: 'loyalty',
      tableName: options.tables.effects,
      inboxTtlSeconds: 3 * 24 * 3600,
    }),
    mail: new RecordingProvider(oursDocs, options.tables.providerLog, 'bench-mail'),
  };
  const ours: Consume = (event) => creditLoyaltyPoints(event, oursDeps);

  const peerClient = client();
  const peerLog = countRoundTrips(peerClient);
  const peerDocs = DynamoDBDocumentClient.from(peerClient);
  const peerMail = new RecordingProvider(peerDocs, options.tables.providerLog, 'bench-peer-mail');
  const peerConfig = new IdempotencyConfig({ eventKeyJmesPath: 'eventId', expiresAfterSeconds: 3 * 24 * 3600 });
  peerConfig.registerLambdaContext(BENCH_LAMBDA_CONTEXT);
  const peer: Consume = makeIdempotent(
    async (event: OrderPlacedEvent) => {
      const points = loyaltyPoints(event.payload.totalCents);
      await peerDocs.send(
        new UpdateCommand({
          TableName: options.tables.effects,
          Key: customerKey(`${event.payload.customerId}-peer`),
          UpdateExpression: 'SET customerId = :id ADD points :points',
          ExpressionAttributeValues: { ':id': event.payload.customerId, ':points': points },
        }),
      );
      await peerMail.send(`peer-loyalty:${event.eventId}`, {
        customerId: event.payload.customerId,
        orderId: event.entityId,
        pointsEarned: points,
      });
      return { points };
    },
    {
      persistenceStore: new DynamoDBPersistenceLayer({
        tableName: options.tables.effects,
        awsSdkV3Client: peerClient,
        keyAttr: 'pk',
        sortKeyAttr: 'sk',
        staticPkValue: 'POWERTOOLS',
        expiryAttr: 'expiresAt',
      }),
      config: peerConfig,
      keyPrefix: `bench-peer-${runId}`,
    },
  );

  try {
    // Warm both clients (connection set-up is not the consumer's cost).
    for (const c of [oursClient, peerClient])
      await c.send(new DescribeTableCommand({ TableName: options.tables.effects }));
    for (const consume of [ours, peer])
      await runPool(warmUp.length, options.concurrency, async (i) => void (await consume(warmUp[i])));
    const side = async (consume: Consume, log: RoundTripLog): Promise<ConsumerSide> => {
      const pass = async () => {
        log.reset();
        const ms = await runPool(events.length, options.concurrency, async (i) => {
          await consume(events[i]);
        });
        const provider = log.trips.filter((t) => t.tables.includes(options.tables.providerLog)).length;
        return {
          rate: perSecond(events.length, ms),
          trips: (log.trips.length - provider) / events.length,
          provider: provider / events.length,
        };
      };
      const first = await pass();
      const duplicate = await pass();
      return {
        messagesPerSecond: { first: first.rate, duplicate: duplicate.rate },
        roundTripsPerMessage: { first: first.trips, duplicate: duplicate.trips },
        providerCallsPerMessage: { first: first.provider, duplicate: duplicate.provider },
      };
    };
    const oursSide = await side(ours, oursLog);
    const peerSide = await side(peer, peerLog);
    return { messages: events.length, concurrency: options.concurrency, ours: oursSide, peer: peerSide };
  } finally {
    oursClient.destroy();
    peerClient.destroy();
  }
}
