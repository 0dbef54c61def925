import {
  AWS_REPRESENTATIVE_LATENCIES,
  awsLatencyCostLine,
  awsRepresentativeDuration,
  functionSqsCallsPerOrder,
} from '@exactly-once/tools/bench/cost-model';
import { costBreakdown, UNIT_PRICES } from '@exactly-once/tools/proof-kit/prices';

/**
 * The bench's second duration figure: an order's round trips at AWS-representative latencies (cited),
 * priced beside the local one measured on the emulators, never instead of it.
 */

const sqsOps = (ops: Record<string, number>) => ({ byOperation: { dynamodb: {}, sqs: ops } });

test('duration is the round trips at their latencies: a transaction at the transaction latency, each SQS request at the SQS latency', () => {
  const latencies = { dynamodbItemMs: 4, dynamodbTransactionMs: 9, sqsMs: 20, sources: 'test' };
  const trips = [{ operation: 'PutItem' }, { operation: 'TransactWriteItems' }, { operation: 'UpdateItem' }];

  const aws = awsRepresentativeDuration({ dynamodbTrips: trips, sqsCallsPerOrder: 0.5, memoryMb: 512, latencies });

  expect(aws.durationMsPerOrder).toBe(4 + 9 + 4 + 0.5 * 20);
  expect(aws.gbSecondsPerOrder).toBeCloseTo(0.5 * 0.027, 10); // 512 MB for 27 ms
});

test('the default latencies are the cited ones: DynamoDB single-digit ms, a transaction twice that, SQS tens of ms', () => {
  expect(AWS_REPRESENTATIVE_LATENCIES).toMatchObject({ dynamodbItemMs: 5, dynamodbTransactionMs: 10, sqsMs: 16 });
  expect(AWS_REPRESENTATIVE_LATENCIES.sources).toContain('single-digit millisecond');
  expect(AWS_REPRESENTATIVE_LATENCIES.sources).toContain('aws.amazon.com/dynamodb');
  expect(AWS_REPRESENTATIVE_LATENCIES.sources).toContain('bitesizedserverless.com');
});

test("only the functions' own SQS requests count (sends, visibility changes), not the pollers' receives and deletes", () => {
  const before = sqsOps({ SendMessageBatch: 10, ReceiveMessage: 100 });
  const after = sqsOps({
    SendMessageBatch: 30,
    ChangeMessageVisibility: 4,
    ReceiveMessage: 900,
    DeleteMessageBatch: 50,
  });

  expect(functionSqsCallsPerOrder(before, after, 8)).toBe(3); // (20 + 4) / 8
});

test('the AWS line replaces only the duration component, names both figures, and states its sources', () => {
  const local = costBreakdown({
    apiRequestsPerEntity: 1,
    lambdaInvocationsPerEntity: 3,
    lambdaGbSecondsPerEntity: 0.25, // 1 s at 256 MB, as the emulators measured it
    dynamoDb: { orders: { writeUnits: 4, readUnits: 0 } },
    sqsRequestsPerEntity: 1,
  });
  const aws = { durationMsPerOrder: 80, gbSecondsPerOrder: 0.02 };
  const localDuration = 0.25 * UNIT_PRICES.lambdaArmGbSecond * 1e6;
  const awsDuration = 0.02 * UNIT_PRICES.lambdaArmGbSecond * 1e6;

  const line = awsLatencyCostLine('clean path', local, aws, { dynamodbTrips: 9, sqsCallsPerOrder: 0.4 });

  expect(line).toContain(
    `cost clean path at AWS-representative call latencies: $${(local.totalPerMillionEntities - localDuration + awsDuration).toFixed(2)} per million orders`,
  );
  expect(line).toContain(`0.0200 GB-s/order = $${awsDuration.toFixed(2)}`);
  expect(line).toContain(`instead of local emulator durations: 0.2500 GB-s/order = $${localDuration.toFixed(2)}`);
  expect(line).toContain('9 DynamoDB round trips, 0.40 SQS requests');
  expect(line).toContain(AWS_REPRESENTATIVE_LATENCIES.sources);
});

test('without a local duration the line says it was not measured, and adds the AWS figure to the rest', () => {
  const local = costBreakdown({
    apiRequestsPerEntity: 1,
    lambdaInvocationsPerEntity: 3,
    dynamoDb: {},
    sqsRequestsPerEntity: 1,
  });

  const line = awsLatencyCostLine(
    'clean path',
    local,
    { durationMsPerOrder: 10, gbSecondsPerOrder: 0.0025 },
    {
      dynamodbTrips: 2,
      sqsCallsPerOrder: 0,
    },
  );

  expect(line).toContain('instead of the local duration was not measured');
  const total = local.totalPerMillionEntities + 0.0025 * UNIT_PRICES.lambdaArmGbSecond * 1e6;
  expect(line).toContain(`$${total.toFixed(2)} per million orders`);
});

test("names the domain's entities by the nouns it is given", () => {
  const local = costBreakdown({
    apiRequestsPerEntity: 1,
    lambdaInvocationsPerEntity: 1,
    dynamoDb: {},
    sqsRequestsPerEntity: 1,
  });

  const line = awsLatencyCostLine(
    'clean path',
    local,
    { durationMsPerOrder: 10, gbSecondsPerOrder: 0.0025 },
    { dynamodbTrips: 2, sqsCallsPerOrder: 0 },
    undefined,
    { order: 'booking', orders: 'bookings' },
  );

  expect(line).toContain('per million bookings, Lambda duration 0.0025 GB-s/booking');
  expect(line).toContain('ms of calls per booking');
  expect(line).not.toContain('order');
});
