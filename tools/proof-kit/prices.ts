/**
 * Published AWS list prices (us-east-1, on-demand, requests only), in one place
 * for the proof kit's report and the bench. Check the pricing pages for your
 * region and date before quoting a figure.
 */
export const UNIT_PRICES = {
  asOf: '2025-01, AWS us-east-1 list prices (on-demand); check the pricing pages for your region and date',
  apiGatewayRestPerMillion: 3.5,
  lambdaRequestsPerMillion: 0.2,
  /** Arm64 (the stack's architecture), per GB-second of billed duration. */
  lambdaArmGbSecond: 0.0000133334,
  /** On-demand write/read request units (prices after the November 2024 reduction). */
  dynamoDbWritesPerMillion: 0.625,
  dynamoDbReadsPerMillion: 0.125,
  /** Each 64 KB chunk of a request's payload is billed as one request. */
  sqsStandardPerMillion: 0.4,
  sqsFifoPerMillion: 0.5,
  /**
   * A SecureString read: GetParameter at standard throughput has no charge; its decryption is one KMS
   * request ($0.03 per 10,000).
   */
  secureParameterReadsPerMillion: 0 + 3.0,
};

/** One line of a cost breakdown: what is billed, how many units per order, and the price per million units. */
export interface CostComponent {
  component: string;
  unitsPerOrder: number;
  pricePerMillionUnits: number;
}

/** Dollars per million orders for one component: units per order x price per million units. */
function componentCostPerMillionOrders(c: CostComponent): number {
  return c.unitsPerOrder * c.pricePerMillionUnits;
}

function totalCostPerMillionOrders(components: readonly CostComponent[]): number {
  return components.reduce((sum, c) => sum + componentCostPerMillionOrders(c), 0);
}

/**
 * Cost per million orders in requests, by component. Inputs are per order. The
 * proof kit's report (every table measured together) and the bench (per table,
 * and Lambda duration where measured) both price with it.
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
  /** Reads of the providers' API keys (SSM SecureString) per order, amortised by the cache; omitted: none. */
  apiKeyReadsPerOrder?: number;
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
  // Priced at the FIFO rate: most of the pipeline's requests go to the FIFO queue.
  components.push({
    component: 'SQS requests (64 KB chunks)',
    unitsPerOrder: inputs.sqsRequestsPerOrder,
    pricePerMillionUnits: UNIT_PRICES.sqsFifoPerMillion,
  });
  if (inputs.apiKeyReadsPerOrder !== undefined)
    components.push({
      component: 'provider API key reads (SSM SecureString, KMS decrypt)',
      unitsPerOrder: inputs.apiKeyReadsPerOrder,
      pricePerMillionUnits: UNIT_PRICES.secureParameterReadsPerMillion,
    });
  return {
    components: components.map((c) => ({ ...c, dollarsPerMillionOrders: componentCostPerMillionOrders(c) })),
    totalPerMillionOrders: totalCostPerMillionOrders(components),
  };
}

/** Lambda GB-seconds per order priced as a per-million-orders unit (the price is per GB-s, not per million). */
function lambdaDurationComponent(gbSecondsPerOrder: number): CostComponent {
  return {
    component: 'Lambda duration (GB-s, arm64)',
    unitsPerOrder: gbSecondsPerOrder,
    pricePerMillionUnits: UNIT_PRICES.lambdaArmGbSecond * 1_000_000,
  };
}

/**
 * API key reads per order: each warm container reads each key it uses once per cache period
 * (`cacheSeconds`), whatever it sends meanwhile, so at `ordersPerSecond` the reads spread over
 * `ordersPerSecond x cacheSeconds` orders. `keysPerContainer` sums, over the consumers, the keys each
 * reads, one warm container each; more containers at a higher rate scale both sides alike.
 */
export function apiKeyReadsPerOrder(options: {
  ordersPerSecond: number;
  cacheSeconds: number;
  keysPerContainer: number;
}): number {
  const orders = options.ordersPerSecond * options.cacheSeconds;
  return orders > 0 ? options.keysPerContainer / orders : 0;
}

/** SQS bills each 64 KB chunk of a payload as one request. */
export function sqsBilledRequests(payloadBytes: number): number {
  return Math.max(1, Math.ceil(payloadBytes / (64 * 1024)));
}

/**
 * What a deployed stack costs per month before any order: published AWS list
 * prices (us-east-1), for the bench's idle cost (tools/bench/idle-cost.ts). A month
 * is 730 hours, as AWS prices monthly items.
 */
export const IDLE_UNIT_PRICES = {
  asOf: '2025-01, AWS us-east-1 list prices; check the pricing pages for your region and date',
  hoursPerMonth: 730,
  /** Per alarm metric, standard resolution (period of 60 s or more). */
  cloudWatchAlarmPerMonth: 0.1,
  /** Per alarm metric, high resolution (period under 60 s). */
  cloudWatchHighResolutionAlarmPerMonth: 0.3,
  /** Per dashboard; an account's first three (up to 50 metrics each) are free. */
  cloudWatchDashboardPerMonth: 3,
  /** Per customer managed key; with rotation on, each of the first two yearly rotations adds $1. */
  kmsKeyPerMonth: 1,
  cloudWatchLogsIngestionPerGb: 0.5,
  cloudWatchLogsStoragePerGbMonth: 0.03,
  /** Scheduled EventBridge rules on the default bus: no charge for the scheduled events. */
  eventBridgeScheduledEventPerMillion: 0,
};
