import {
  componentCostPerMillionOrders,
  lambdaDurationComponent,
  totalCostPerMillionOrders,
  UNIT_PRICES,
  type CostComponent,
} from '../loadtest/prices';
import type { RoundTrip } from './round-trips';

/**
 * Cost per million orders in requests, by component, with the proof kit's
 * price table and arithmetic (loadtest/prices.ts). Inputs are per order.
 */
export interface CostInputs {
  apiRequestsPerOrder: number;
  lambdaInvocationsPerOrder: number;
  /** GB-seconds per order at the functions' memory sizes; undefined when not measured. */
  lambdaGbSecondsPerOrder?: number;
  /** Write/read request units per order, by table label. */
  dynamoDb: Record<string, { writeUnits: number; readUnits: number }>;
  /** SQS requests per order, each counted in 64 KB chunks. */
  sqsRequestsPerOrder: number;
}

export interface CostBreakdown {
  components: (CostComponent & { dollarsPerMillionOrders: number })[];
  totalPerMillionOrders: number;
}

export function costBreakdown(inputs: CostInputs): CostBreakdown {
  const components: CostComponent[] = [
    {
      component: 'API Gateway REST requests',
      unitsPerOrder: inputs.apiRequestsPerOrder,
      pricePerMillionUnits: UNIT_PRICES.apiGatewayRestPerMillion,
    },
    {
      component: 'Lambda requests',
      unitsPerOrder: inputs.lambdaInvocationsPerOrder,
      pricePerMillionUnits: UNIT_PRICES.lambdaRequestsPerMillion,
    },
  ];
  if (inputs.lambdaGbSecondsPerOrder !== undefined)
    components.push(lambdaDurationComponent(inputs.lambdaGbSecondsPerOrder));
  for (const [table, units] of Object.entries(inputs.dynamoDb)) {
    components.push({
      component: `DynamoDB ${table} WRU`,
      unitsPerOrder: units.writeUnits,
      pricePerMillionUnits: UNIT_PRICES.dynamoDbWritesPerMillion,
    });
    if (units.readUnits > 0)
      components.push({
        component: `DynamoDB ${table} RRU`,
        unitsPerOrder: units.readUnits,
        pricePerMillionUnits: UNIT_PRICES.dynamoDbReadsPerMillion,
      });
  }
  // Priced at the FIFO rate, as the proof kit does: most of the pipeline's requests go to the FIFO queue.
  components.push({
    component: 'SQS requests (64 KB chunks)',
    unitsPerOrder: inputs.sqsRequestsPerOrder,
    pricePerMillionUnits: UNIT_PRICES.sqsFifoPerMillion,
  });
  return {
    components: components.map((c) => ({ ...c, dollarsPerMillionOrders: componentCostPerMillionOrders(c) })),
    totalPerMillionOrders: totalCostPerMillionOrders(components),
  };
}

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
    const isRead = ['GetItem', 'Query', 'Scan', 'BatchGetItem', 'TransactGetItems'].includes(trip.operation);
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
