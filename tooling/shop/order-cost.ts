import type { AllInInputs } from '@exactly-once/tools/bench/cost-model';

/**
 * One order's clean path as measured through the shop's handlers on DynamoDB Local
 * (test/integration/order-cost-measured.test.ts holds these figures, by the order's number of lines):
 * write units by step, table and index; bytes and lines each function writes to its log.
 */
export interface MeasuredOrder {
  writeUnits: Record<string, Record<string, Record<string, number>>>;
  /** Read units by step and table: fulfilment's read of the order's inbox-ledger item (FULFILMENT_LEGACY_LEDGER `read`). */
  readUnits: Record<string, Record<string, Record<string, number>>>;
  logBytes: Record<string, number>;
  logLines: Record<string, number>;
  /** Of `logBytes`, the `Span` lines' (what span sampling thins). */
  spanLogBytes: Record<string, number>;
}

/** Fulfilment's one consistent read of the order's inbox-ledger item, whatever the order's size. */
const FULFILMENT_LEGACY_READ = { create: {}, relay: {}, fulfilment: { effects: { table: 1 } }, loyalty: {} };

export const MEASURED_CLEAN_PATH: Record<number, MeasuredOrder> = {
  1: {
    writeUnits: {
      create: { idempotency: { table: 2 }, orders: { table: 6, pendingOutbox: 2 } },
      relay: { orders: { table: 1, pendingOutbox: 1 } },
      fulfilment: { providerlog: { table: 1 }, effects: { table: 5 } },
      loyalty: { providerlog: { table: 1 }, effects: { table: 5 } },
    },
    readUnits: FULFILMENT_LEGACY_READ,
    logBytes: { create: 1472, relay: 911, fulfilment: 2480, loyalty: 2466 },
    logLines: { create: 3, relay: 2, fulfilment: 4, loyalty: 4 },
    spanLogBytes: { create: 1271, relay: 694, fulfilment: 2184, loyalty: 2173 },
  },
  2: {
    writeUnits: {
      create: { idempotency: { table: 2 }, orders: { table: 6, pendingOutbox: 2 } },
      relay: { orders: { table: 1, pendingOutbox: 1 } },
      fulfilment: { providerlog: { table: 1 }, effects: { table: 7 } },
      loyalty: { providerlog: { table: 1 }, effects: { table: 5 } },
    },
    readUnits: FULFILMENT_LEGACY_READ,
    logBytes: { create: 1472, relay: 912, fulfilment: 2480, loyalty: 2466 },
    logLines: { create: 3, relay: 2, fulfilment: 4, loyalty: 4 },
    spanLogBytes: { create: 1271, relay: 695, fulfilment: 2184, loyalty: 2173 },
  },
  10: {
    writeUnits: {
      create: { idempotency: { table: 3 }, orders: { table: 8, pendingOutbox: 4 } },
      relay: { orders: { table: 2, pendingOutbox: 2 } },
      fulfilment: { providerlog: { table: 1 }, effects: { table: 23 } },
      loyalty: { providerlog: { table: 1 }, effects: { table: 5 } },
    },
    readUnits: FULFILMENT_LEGACY_READ,
    logBytes: { create: 1470, relay: 911, fulfilment: 2480, loyalty: 2469 },
    logLines: { create: 3, relay: 2, fulfilment: 4, loyalty: 4 },
    spanLogBytes: { create: 1269, relay: 694, fulfilment: 2184, loyalty: 2176 },
  },
  50: {
    writeUnits: {
      create: { idempotency: { table: 5 }, orders: { table: 18, pendingOutbox: 8 } },
      relay: { orders: { table: 4, pendingOutbox: 4 } },
      fulfilment: { providerlog: { table: 4 }, effects: { table: 103 } },
      loyalty: { providerlog: { table: 1 }, effects: { table: 5 } },
    },
    readUnits: FULFILMENT_LEGACY_READ,
    logBytes: { create: 1470, relay: 911, fulfilment: 2480, loyalty: 2469 },
    logLines: { create: 3, relay: 2, fulfilment: 4, loyalty: 4 },
    spanLogBytes: { create: 1269, relay: 694, fulfilment: 2184, loyalty: 2176 },
  },
};

/** Write units a measured step spent, over its tables and indexes, leaving out the tables named. */
export function stepWriteUnits(order: MeasuredOrder, step: string, without: readonly string[] = []): number {
  return Object.entries(order.writeUnits[step] ?? {})
    .filter(([table]) => !without.includes(table))
    .reduce((sum, [, targets]) => sum + Object.values(targets).reduce((s, n) => s + n, 0), 0);
}

/** Read units a measured step spent, over its tables. */
export function stepReadUnits(order: MeasuredOrder, step: string): number {
  return Object.values(order.readUnits[step] ?? {}).reduce(
    (sum, targets) => sum + Object.values(targets).reduce((s, n) => s + n, 0),
    0,
  );
}

const sumOf = (values: Record<string, number>) => Object.values(values).reduce((s, n) => s + n, 0);

/** The order docs/cost.md prices: two lines, the shop's usual order (each line under 1 KB of item). */
const PRICED = MEASURED_CLEAN_PATH[2];
/**
 * The provider log is the recording provider double's table: a deployment with real providers
 * (docs/deploying.md) calls their HTTP APIs instead, so its writes are not the shop's bill.
 */
const TEST_DOUBLE_TABLES = ['providerlog'];

/**
 * The shop's all-in cost inputs (packages/tools/src/bench/cost-model.ts allInCost): what was measured on this
 * machine (write units, log bytes and lines: MEASURED_CLEAN_PATH, a 2-line order) and what is modelled,
 * each with its reason. docs/cost.md prints the result; test/unit/cost-all-in.test.ts holds it there.
 */
export const SHOP_ALL_IN: AllInInputs = {
  ordersPerMonth: 10_000_000,
  apiRequestsPerOrder: 1,
  apiWriteUnits: stepWriteUnits(PRICED, 'create'),
  relayWriteUnits: stepWriteUnits(PRICED, 'relay'),
  consumerWriteUnits: {
    fulfilment: stepWriteUnits(PRICED, 'fulfilment', TEST_DOUBLE_TABLES),
    loyalty: stepWriteUnits(PRICED, 'loyalty', TEST_DOUBLE_TABLES),
  },
  // npm run bench: 1.25-1.5 invocations an order at 15 orders/s (create-order 1, the relay's and consumers' share
  // of a batch; 1.25 with loyalty's batching window removed, 1.28 with it); 1.5 allows for lighter load's smaller batches.
  lambdaInvocationsPerOrder: 1.5,
  // npm run bench at AWS-representative latencies: 59 ms of calls an order; plus 10 ms of compute an invocation, 256 MB.
  lambdaGbSecondsPerOrder: ((59 + 1.5 * 10) / 1000) * 0.25,
  // npm run bench: 0.9-1.3 SQS requests an order (batched sends, receives, deletes).
  sqsRequestsPerOrder: 1.3,
  appLogBytesPerOrder: sumOf(PRICED.logBytes),
  spanLogBytesPerOrder: sumOf(PRICED.spanLogBytes),
  appLogLinesPerOrder: sumOf(PRICED.logLines),
  // Deployed, each line's function_name and function_arn are the stack's (about 60 and 110 characters)
  // where the measurement's are `test-function` and its ARN (13 and 64).
  deployedNameBytesPerLine: 95,
  spanSampleRate: 0.1, // prod's default (lib/config.ts)
  // JSON log format: platform.start (about 150 B) and platform.report with its X-Ray fields (about 450 B).
  platformLogBytesPerInvocation: 600,
  // The REST API's jsonWithStandardFields access log line, with an IAM caller's ARN in it.
  accessLogBytesPerRequest: 350,
  // JSON lines compress about 6 to 1; prod keeps its logs a year.
  logCompression: 0.15,
  logRetentionMonths: 12,
  xray: {
    // Active tracing: the API stage and every function; a trace starts at the API request and at each
    // relay invocation (a stream record carries no trace header); the consumers continue the relay's trace
    // from the message's AWSTraceHeader. At 3.8 orders/s the relay's batches run about one a second.
    entryPoints: [
      { name: 'API request', perSecond: 10_000_000 / (730 * 3600) },
      { name: 'relay invocation', perSecond: 1 },
    ],
    reservoirPerSecond: 1,
    fixedRate: 0.05,
  },
  // Warm environments serve steady traffic; about one invocation in a thousand starts one (scale-ups, recycling).
  init: { coldStartsPerInvocation: 0.001, initMs: 500, memoryMb: 256 },
  // What stays the month: the order item (about 600 B) and fulfilment's order item (about 300 B), plus
  // DynamoDB's 100 B per item; the outbox item, idempotency record and inbox claims expire within days.
  storedBytesPerOrder: 1_100,
  fixedMonthly: {
    // Per order, not fixed: the model prices write units only, so the one read unit is here (all-in only).
    "fulfilment's read of an order's inbox-ledger item": {
      dollars: 10_000_000 * stepReadUnits(PRICED, 'fulfilment') * (0.125 / 1_000_000),
      basis: 'measured',
      detail:
        'one consistent read unit per OrderPlaced while FULFILMENT_LEGACY_LEDGER is read (the default), at $0.125 a million read units; none with off (docs/runbook.md, upgrade)',
    },
    'alarms, dashboard, KMS key, sweeper (idle cost)': {
      dollars: 7.91,
      basis: 'measured',
      detail:
        'npm run bench idle cost, read from the template: 39 alarm metrics $3.90, 1 dashboard $3.00, 1 KMS key $1.00, the sweeper $0.01',
    },
    'custom metrics (EMF)': {
      dollars: 27 * 0.3,
      basis: 'modelled',
      detail:
        "up to 27 metric and dimension sets (the consumers' outcome and failure counts per consumer, the API's and the relay's) at $0.30; a month with no failure publishes about half",
    },
    "KMS requests for the tables' AWS managed key": {
      dollars: 4 * 730 * 12 * (0.03 / 10_000),
      basis: 'modelled',
      detail: 'four tables; DynamoDB asks KMS for a table key about every 5 minutes it is used',
    },
    'SQS long polls while idle': {
      dollars: 2 * 5 * 0.053,
      basis: 'modelled',
      detail: 'two SQS event source mappings, about five pollers each, one empty 20 s poll at a time',
    },
  },
};
