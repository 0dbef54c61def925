import type { RuntimeStats } from '../local-runtime/runtime';
import { ALL_IN_PRICES, UNIT_PRICES, type CostBreakdown } from '../proof-kit/prices';
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

// ---------------------------------------------------------------- all-in cost per order

/** Whether a cost line's units were measured on this machine or modelled from stated assumptions. */
export type CostBasis = 'measured' | 'modelled';

/** One line of the all-in cost: what, on what basis, dollars per million orders, and how it was counted. */
export interface AllInLine {
  item: string;
  basis: CostBasis;
  /** Part of the clean-path figure (requests, write units, Lambda) or only of the all-in one. */
  cleanPath: boolean;
  dollarsPerMillion: number;
  detail: string;
}

/**
 * What the all-in cost of one order is counted from. Write units come per part (the API's, the
 * relay's, each consumer's), so a consumer's ledger can change its figure alone: a sequenced ledger's
 * consumer is one entry of `consumerWriteUnits`.
 */
export interface AllInInputs {
  /** Orders a month: the fixed monthly items are spread over them. */
  ordersPerMonth: number;
  /** API Gateway REST requests per order. */
  apiRequestsPerOrder: number;
  /** The API's write units per order (idempotency record and the order's transaction, indexes included). */
  apiWriteUnits: number;
  /** The relay's write units per order (the dispatched mark and its index delete). */
  relayWriteUnits: number;
  /** Each consumer's write units per order (its ledger and effect, its done-marks), by consumer. */
  consumerWriteUnits: Record<string, number>;
  lambdaInvocationsPerOrder: number;
  /** GB-seconds per order at AWS latencies (calls and compute). */
  lambdaGbSecondsPerOrder: number;
  sqsRequestsPerOrder: number;
  /** Bytes the functions print per order: all of it, and the `Span` lines' share. */
  appLogBytesPerOrder: number;
  spanLogBytesPerOrder: number;
  /** Lines the functions print per order, and the bytes deployed names add to each (function name and ARN). */
  appLogLinesPerOrder: number;
  deployedNameBytesPerLine: number;
  /** The span sampling's rate (the stage's `spanSampleRate`). */
  spanSampleRate: number;
  /** Lambda's own lines per invocation (platform start and report, JSON format). */
  platformLogBytesPerInvocation: number;
  /** The API's access log line per request. */
  accessLogBytesPerRequest: number;
  /** Compressed log bytes per raw byte (CloudWatch bills stored logs compressed) and months kept. */
  logCompression: number;
  logRetentionMonths: number;
  /**
   * X-Ray traces recorded: the places a trace starts (the API request; each relay invocation) and
   * their rates, with the sampling rule's reservoir (traces a second) and fixed rate.
   */
  xray: { entryPoints: { name: string; perSecond: number }[]; reservoirPerSecond: number; fixedRate: number };
  /** Cold starts per invocation and the INIT they bill (since August 2025), at the functions' memory. */
  init: { coldStartsPerInvocation: number; initMs: number; memoryMb: number };
  /** Bytes of items an order leaves in DynamoDB for the month (storage and point-in-time recovery). */
  storedBytesPerOrder: number;
  /** Monthly items that do not scale with orders, in dollars, by name (alarms, dashboard, metrics, keys). */
  fixedMonthly: Record<string, { dollars: number; basis: CostBasis; detail: string }>;
}

const GB_BYTES = 1024 ** 3;
const SECONDS_PER_MONTH = 730 * 3600;

/**
 * The all-in cost per million orders, line by line with its basis, and the two figures docs/cost.md
 * gives: the clean path (requests, write units, Lambda, SQS) and the all-in (plus logs, X-Ray, INIT,
 * storage and the fixed monthly items spread over the month's orders).
 *
 * @example
 * ```ts
 * const cost = allInCost(SHOP_ALL_IN);
 * cost.cleanPathPerMillion; // requests and write units
 * cost.allInPerMillion; // everything the bill has
 * ```
 */
export function allInCost(inputs: AllInInputs): {
  lines: AllInLine[];
  cleanPathPerMillion: number;
  allInPerMillion: number;
} {
  const prices = { ...UNIT_PRICES, ...ALL_IN_PRICES };
  const lines = [...cleanPathLines(inputs, prices), ...logLines(inputs, prices), ...otherLines(inputs, prices)];
  const sum = (ls: AllInLine[]) => ls.reduce((s, l) => s + l.dollarsPerMillion, 0);
  return { lines, cleanPathPerMillion: sum(lines.filter((l) => l.cleanPath)), allInPerMillion: sum(lines) };
}

type AllInPrices = typeof UNIT_PRICES & typeof ALL_IN_PRICES;
const m = 1_000_000;

/** A list of lines and the function that adds one. */
function lineList() {
  const lines: AllInLine[] = [];
  const line = (item: string, basis: CostBasis, cleanPath: boolean, dollarsPerMillion: number, detail: string) =>
    lines.push({ item, basis, cleanPath, dollarsPerMillion, detail });
  return { lines, line };
}

/** The clean path's lines: requests, Lambda requests and duration, write units by part, SQS. */
function cleanPathLines(inputs: AllInInputs, prices: AllInPrices): AllInLine[] {
  const { lines, line } = lineList();

  line(
    'API Gateway REST requests',
    'measured',
    true,
    inputs.apiRequestsPerOrder * prices.apiGatewayRestPerMillion,
    `${inputs.apiRequestsPerOrder} a order`,
  );
  line(
    'Lambda requests',
    'modelled',
    true,
    inputs.lambdaInvocationsPerOrder * prices.lambdaRequestsPerMillion,
    `${inputs.lambdaInvocationsPerOrder} invocations an order (batches)`,
  );
  line(
    'Lambda duration (arm64)',
    'modelled',
    true,
    inputs.lambdaGbSecondsPerOrder * prices.lambdaArmGbSecond * m,
    `${inputs.lambdaGbSecondsPerOrder} GB-s an order`,
  );
  const wru = (units: number) => units * prices.dynamoDbWritesPerMillion;
  line(
    'DynamoDB writes: API (idempotency, order transaction, index)',
    'measured',
    true,
    wru(inputs.apiWriteUnits),
    `${inputs.apiWriteUnits} WRU`,
  );
  line(
    'DynamoDB writes: relay (dispatched mark, index delete)',
    'measured',
    true,
    wru(inputs.relayWriteUnits),
    `${inputs.relayWriteUnits} WRU`,
  );
  for (const [consumer, units] of Object.entries(inputs.consumerWriteUnits))
    line(`DynamoDB writes: ${consumer} (ledger, effect, done-mark)`, 'measured', true, wru(units), `${units} WRU`);
  line(
    'SQS requests',
    'measured',
    true,
    inputs.sqsRequestsPerOrder * prices.sqsFifoPerMillion,
    `${inputs.sqsRequestsPerOrder} an order, at the FIFO rate`,
  );
  return lines;
}

/** CloudWatch Logs: what the functions, Lambda and the API's access log write, ingested and stored. */
function logLines(inputs: AllInInputs, prices: AllInPrices): AllInLine[] {
  const { lines, line } = lineList();
  const keptSpanBytes = inputs.spanLogBytesPerOrder * inputs.spanSampleRate;
  const otherAppBytes = inputs.appLogBytesPerOrder - inputs.spanLogBytesPerOrder;
  const spanLineShare = inputs.appLogBytesPerOrder > 0 ? inputs.spanLogBytesPerOrder / inputs.appLogBytesPerOrder : 0;
  const keptLines = inputs.appLogLinesPerOrder * (1 - spanLineShare + spanLineShare * inputs.spanSampleRate);
  const logBytes =
    keptSpanBytes +
    otherAppBytes +
    keptLines * inputs.deployedNameBytesPerLine +
    inputs.lambdaInvocationsPerOrder * inputs.platformLogBytesPerInvocation +
    inputs.apiRequestsPerOrder * inputs.accessLogBytesPerRequest;
  line(
    'CloudWatch Logs ingestion',
    'measured',
    false,
    (logBytes / GB_BYTES) * prices.cloudWatchLogsIngestionPerGb * m,
    `${Math.round(logBytes)} B an order: span lines ${Math.round(keptSpanBytes)} (${inputs.spanLogBytesPerOrder} at rate ${inputs.spanSampleRate}), other lines ${otherAppBytes} (measured); deployed names, platform lines, access log (modelled)`,
  );
  line(
    'CloudWatch Logs storage',
    'modelled',
    false,
    (logBytes / GB_BYTES) *
      inputs.logCompression *
      prices.cloudWatchLogsStoragePerGbMonth *
      inputs.logRetentionMonths *
      m,
    `compressed to ${inputs.logCompression} of raw, kept ${inputs.logRetentionMonths} months`,
  );
  return lines;
}

/** X-Ray, Lambda INIT, DynamoDB storage and the fixed monthly items spread over the month's orders. */
function otherLines(inputs: AllInInputs, prices: AllInPrices): AllInLine[] {
  const { lines, line } = lineList();
  const ordersPerSecond = inputs.ordersPerMonth / SECONDS_PER_MONTH;
  const tracesPerMonth = inputs.xray.entryPoints.reduce((sum, e) => {
    const sampled =
      Math.min(e.perSecond, inputs.xray.reservoirPerSecond) +
      Math.max(0, e.perSecond - inputs.xray.reservoirPerSecond) * inputs.xray.fixedRate;
    return sum + sampled * SECONDS_PER_MONTH;
  }, 0);
  const billedTraces = Math.max(0, tracesPerMonth - prices.xrayFreeTracesPerMonth);
  line(
    'X-Ray traces recorded',
    'modelled',
    false,
    ((billedTraces / 1e6) * prices.xrayTracesRecordedPerMillion * m) / inputs.ordersPerMonth,
    `${Math.round(tracesPerMonth).toLocaleString('en-US')} traces a month at ${ordersPerSecond.toFixed(2)} orders/s: each trace start (${inputs.xray.entryPoints.map((e) => e.name).join(', ')}) samples ${inputs.xray.reservoirPerSecond}/s and ${inputs.xray.fixedRate * 100}% of the rest`,
  );
  const initGbSeconds =
    inputs.lambdaInvocationsPerOrder *
    inputs.init.coldStartsPerInvocation *
    (inputs.init.initMs / 1000) *
    (inputs.init.memoryMb / 1024);
  line(
    'Lambda INIT (billed since August 2025)',
    'modelled',
    false,
    initGbSeconds * prices.lambdaArmGbSecond * m,
    `${inputs.init.coldStartsPerInvocation * 100}% of invocations cold, ${inputs.init.initMs} ms each`,
  );
  line(
    'DynamoDB storage and point-in-time recovery',
    'modelled',
    false,
    (inputs.storedBytesPerOrder / GB_BYTES) * (prices.dynamoDbStoragePerGbMonth + prices.dynamoDbPitrPerGbMonth) * m,
    `${inputs.storedBytesPerOrder} B an order, for the month it is written; each further month kept costs the same again`,
  );
  for (const [item, fixed] of Object.entries(inputs.fixedMonthly))
    line(
      item,
      fixed.basis,
      false,
      (fixed.dollars * m) / inputs.ordersPerMonth,
      `$${fixed.dollars.toFixed(2)} a month over ${inputs.ordersPerMonth.toLocaleString('en-US')} orders; ${fixed.detail}`,
    );
  return lines;
}
