import type { RuntimeStats } from '../local-runtime/runtime';
import { UNIT_PRICES, type CostBreakdown } from '../proof-kit/prices';
import { ratio } from './figures';
import { READ_OPERATIONS, type RoundTrip } from './round-trips';

/**
 * Write and read units by table for a set of round trips. Single-item requests
 * use the capacity DynamoDB Local reported (it counts item size and index
 * writes); transactions use the billing rule, two units per item up to 1 KB,
 * because DynamoDB Local reports a flat figure for them whatever their size.
 */
export function unitsByTable(
  trips: readonly RoundTrip[],
  label: (table: string) => string,
): Record<string, { writeUnits: number; readUnits: number }> {
  const result: Record<string, { writeUnits: number; readUnits: number }> = {};
  const add = (table: string, write: number, read: number) => {
    const entry = (result[label(table)] ??= { writeUnits: 0, readUnits: 0 });
    entry.writeUnits += write;
    entry.readUnits += read;
  };
  for (const trip of trips) {
    const reported = Object.entries(trip.capacity);
    const transactional = trip.operation.startsWith('Transact');
    if (!transactional && reported.some(([, c]) => c.write + c.read > 0)) {
      for (const [table, c] of reported) add(table, c.write, c.read);
      continue;
    }
    const isRead = READ_OPERATIONS.has(trip.operation);
    const units = transactional ? 2 * trip.items : trip.items;
    for (const table of trip.tables)
      add(table, isRead ? 0 : units / trip.tables.length, isRead ? units / trip.tables.length : 0);
  }
  return result;
}

/** GB-seconds per order from per-function busy time and memory (MB), over `orders` orders. */
export function gbSecondsPerOrder(functions: readonly { memoryMb: number; busyMs: number }[], orders: number): number {
  if (orders <= 0) return 0;
  return functions.reduce((sum, f) => sum + (f.memoryMb / 1024) * (f.busyMs / 1000), 0) / orders;
}

/**
 * DynamoDB units per order by table between two stats snapshots, as the
 * runtime's counting proxy saw them (labelled `orders`, `effects`, ...).
 */
export function unitsPerOrderByTable(
  before: Pick<RuntimeStats, 'dynamodbByTable'>,
  after: Pick<RuntimeStats, 'dynamodbByTable'>,
  orders: number,
  label: (table: string) => string,
): Record<string, { writeUnits: number; readUnits: number }> {
  const result: Record<string, { writeUnits: number; readUnits: number }> = {};
  for (const [table, units] of Object.entries(after.dynamodbByTable ?? {})) {
    const earlier = before.dynamodbByTable?.[table] ?? { writeUnits: 0, readUnits: 0 };
    const writeUnits = ratio(units.writeUnits - earlier.writeUnits, orders);
    const readUnits = ratio(units.readUnits - earlier.readUnits, orders);
    if (writeUnits === 0 && readUnits === 0) continue;
    const entry = (result[label(table)] ??= { writeUnits: 0, readUnits: 0 });
    entry.writeUnits += writeUnits;
    entry.readUnits += readUnits;
  }
  return result;
}

/**
 * What one call costs in Lambda duration on AWS, as the providers state or others measured it: the
 * emulators answer in tens of milliseconds where AWS answers in a few, so duration measured locally
 * overstates the duration a deployment pays for. Representative figures, not measurements of this stack.
 */
export interface AwsCallLatencies {
  /** One single-item DynamoDB request (GetItem, PutItem, UpdateItem, DeleteItem, Query of one item), ms. */
  dynamodbItemMs: number;
  /** One DynamoDB transaction (TransactWriteItems, TransactGetItems), ms. */
  dynamodbTransactionMs: number;
  /** One SQS request a function makes (SendMessageBatch, SendMessage, ChangeMessageVisibility), ms. */
  sqsMs: number;
  /** Where each figure comes from, printed beside the cost. */
  sources: string;
}

/**
 * - DynamoDB, 5 ms a single-item request: the middle of the "single-digit millisecond performance at
 *   any scale" AWS states for DynamoDB (aws.amazon.com/dynamodb).
 * - A transaction, 10 ms: two single-item requests' time, an assumption that follows the pricing rule
 *   (a transactional write is billed as two writes); AWS states no transaction latency.
 * - SQS, 16 ms a request: the p50 an SQS standard queue added between a producer and a Lambda consumer
 *   in eu-west-1 as bitesizedserverless.com measured it ("Serverless Messaging: Latency Compared",
 *   2022); one send is part of that path, so this is an upper figure for it. AWS states no SQS
 *   request latency.
 */
export const AWS_REPRESENTATIVE_LATENCIES: AwsCallLatencies = {
  dynamodbItemMs: 5,
  dynamodbTransactionMs: 10,
  sqsMs: 16,
  sources:
    'DynamoDB 5 ms per request ("single-digit millisecond", aws.amazon.com/dynamodb), 10 ms per transaction (assumed: two requests), SQS 16 ms per request (p50 producer-to-consumer, bitesizedserverless.com 2022)',
};

/** The SQS operations a function makes itself (the relay's sends, a consumer's backoff and DLQ copies); polling and deleting are Lambda's. */
export const FUNCTION_SQS_OPERATIONS: readonly string[] = [
  'SendMessage',
  'SendMessageBatch',
  'ChangeMessageVisibility',
  'ChangeMessageVisibilityBatch',
];

/** SQS requests per order the functions made between two stats snapshots (pollers' requests left out). */
export function functionSqsCallsPerOrder(
  before: Pick<RuntimeStats, 'byOperation'>,
  after: Pick<RuntimeStats, 'byOperation'>,
  orders: number,
): number {
  const calls = FUNCTION_SQS_OPERATIONS.reduce(
    (sum, op) => sum + (after.byOperation.sqs[op] ?? 0) - (before.byOperation.sqs[op] ?? 0),
    0,
  );
  return ratio(calls, orders);
}

/**
 * Lambda duration per order as it would be on AWS: the order's round trips (DynamoDB, counted by
 * round-trips.ts on the real code path; SQS, counted by the runtime) each at its AWS-representative
 * latency, at the functions' memory. The time waiting on calls only: the functions' own compute, cold
 * starts and the providers' answers are left out, so it is a floor for what a deployment pays, where
 * the local figure is a ceiling.
 */
export function awsRepresentativeDuration(input: {
  dynamodbTrips: readonly Pick<RoundTrip, 'operation'>[];
  sqsCallsPerOrder: number;
  memoryMb: number;
  latencies?: AwsCallLatencies;
}): { durationMsPerOrder: number; gbSecondsPerOrder: number } {
  const latencies = input.latencies ?? AWS_REPRESENTATIVE_LATENCIES;
  const dynamodbMs = input.dynamodbTrips.reduce(
    (sum, trip) =>
      sum + (trip.operation.startsWith('Transact') ? latencies.dynamodbTransactionMs : latencies.dynamodbItemMs),
    0,
  );
  const durationMsPerOrder = dynamodbMs + input.sqsCallsPerOrder * latencies.sqsMs;
  return { durationMsPerOrder, gbSecondsPerOrder: (input.memoryMb / 1024) * (durationMsPerOrder / 1000) };
}

/**
 * The second cost line, labelled against the first: the same breakdown with Lambda duration priced
 * from AWS-representative call latencies ({@link awsRepresentativeDuration}) instead of the
 * emulators' durations. Never instead of the local line: the bench prints both.
 */
export function awsLatencyCostLine(
  name: string,
  local: CostBreakdown,
  aws: { durationMsPerOrder: number; gbSecondsPerOrder: number },
  counted: { dynamodbTrips: number; sqsCallsPerOrder: number },
  latencies: AwsCallLatencies = AWS_REPRESENTATIVE_LATENCIES,
  /** The domain's entity, singular and plural (its proof domain's nouns). */
  nouns: { order: string; orders: string } = { order: 'order', orders: 'orders' },
): string {
  const { order, orders } = nouns;
  const perMillion = (gbSeconds: number) => gbSeconds * UNIT_PRICES.lambdaArmGbSecond * 1_000_000;
  const localDuration = local.components.find((c) => c.component.startsWith('Lambda duration'));
  const localDollars = localDuration?.dollarsPerMillionEntities ?? 0;
  const awsDollars = perMillion(aws.gbSecondsPerOrder);
  const total = local.totalPerMillionEntities - localDollars + awsDollars;
  const localPart =
    localDuration === undefined
      ? 'the local duration was not measured'
      : `local emulator durations: ${localDuration.unitsPerEntity.toFixed(4)} GB-s/${order} = $${localDollars.toFixed(2)}`;
  return (
    `cost ${name} at AWS-representative call latencies: $${total.toFixed(2)} per million ${orders}, Lambda duration ` +
    `${aws.gbSecondsPerOrder.toFixed(4)} GB-s/${order} = $${awsDollars.toFixed(2)} (${aws.durationMsPerOrder.toFixed(0)} ms of calls per ${order}: ` +
    `${counted.dynamodbTrips} DynamoDB round trips, ${counted.sqsCallsPerOrder.toFixed(2)} SQS requests; compute, cold starts and provider answers not included) ` +
    `instead of ${localPart}; latencies: ${latencies.sources}`
  );
}
