/**
 * Published AWS list prices (us-east-1, on-demand, requests only), in one place
 * for the proof kit's report and the bench. Check the pricing pages for your
 * region and date before quoting a figure.
 */
export const UNIT_PRICES = {
  asOf: '2026-12, AWS us-east-1 list prices (on-demand), from the pricing pages docs/cost.md names; check them for your region and date',
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

/** One line of a cost breakdown: what is billed, how many units per entity, and the price per million units. */
export interface CostComponent {
  component: string;
  unitsPerEntity: number;
  pricePerMillionUnits: number;
}

/** Dollars per million entities for one component: units per entity x price per million units. */
function componentCostPerMillionEntities(c: CostComponent): number {
  return c.unitsPerEntity * c.pricePerMillionUnits;
}

function totalCostPerMillionEntities(components: readonly CostComponent[]): number {
  return components.reduce((sum, c) => sum + componentCostPerMillionEntities(c), 0);
}

/**
 * Cost per million entities (the shop's orders) in requests, by component. Inputs are per entity. The
 * proof kit's report (every table measured together) and the bench (per table,
 * and Lambda duration where measured) both price with it.
 */
export interface CostInputs {
  apiRequestsPerEntity: number;
  lambdaInvocationsPerEntity: number;
  /** GB-seconds per entity at the functions' memory sizes; undefined when not measured. */
  lambdaGbSecondsPerEntity?: number;
  /** Write/read request units per entity, by table label. */
  dynamoDb: Record<string, { writeUnits: number; readUnits: number }>;
  /** SQS requests per entity, each counted in 64 KB chunks. */
  sqsRequestsPerEntity: number;
  /** Reads of the providers' API keys (SSM SecureString) per entity, amortised by the cache; omitted: none. */
  apiKeyReadsPerEntity?: number;
}

export interface CostBreakdown {
  components: (CostComponent & { dollarsPerMillionEntities: number })[];
  totalPerMillionEntities: number;
}

export function costBreakdown(inputs: CostInputs): CostBreakdown {
  const components: CostComponent[] = [
    {
      component: 'API Gateway REST requests',
      unitsPerEntity: inputs.apiRequestsPerEntity,
      pricePerMillionUnits: UNIT_PRICES.apiGatewayRestPerMillion,
    },
    {
      component: 'Lambda requests',
      unitsPerEntity: inputs.lambdaInvocationsPerEntity,
      pricePerMillionUnits: UNIT_PRICES.lambdaRequestsPerMillion,
    },
  ];
  if (inputs.lambdaGbSecondsPerEntity !== undefined)
    components.push(lambdaDurationComponent(inputs.lambdaGbSecondsPerEntity));
  for (const [table, units] of Object.entries(inputs.dynamoDb)) {
    components.push({
      component: `DynamoDB ${table} WRU`,
      unitsPerEntity: units.writeUnits,
      pricePerMillionUnits: UNIT_PRICES.dynamoDbWritesPerMillion,
    });
    if (units.readUnits > 0)
      components.push({
        component: `DynamoDB ${table} RRU`,
        unitsPerEntity: units.readUnits,
        pricePerMillionUnits: UNIT_PRICES.dynamoDbReadsPerMillion,
      });
  }
  // Priced at the FIFO rate: most of the pipeline's requests go to the FIFO queue.
  components.push({
    component: 'SQS requests (64 KB chunks)',
    unitsPerEntity: inputs.sqsRequestsPerEntity,
    pricePerMillionUnits: UNIT_PRICES.sqsFifoPerMillion,
  });
  if (inputs.apiKeyReadsPerEntity !== undefined)
    components.push({
      component: 'provider API key reads (SSM SecureString, KMS decrypt)',
      unitsPerEntity: inputs.apiKeyReadsPerEntity,
      pricePerMillionUnits: UNIT_PRICES.secureParameterReadsPerMillion,
    });
  return {
    components: components.map((c) => ({ ...c, dollarsPerMillionEntities: componentCostPerMillionEntities(c) })),
    totalPerMillionEntities: totalCostPerMillionEntities(components),
  };
}

/** Lambda GB-seconds per entity priced as a per-million-entities unit (the price is per GB-s, not per million). */
function lambdaDurationComponent(gbSecondsPerOrder: number): CostComponent {
  return {
    component: 'Lambda duration (GB-s, arm64)',
    unitsPerEntity: gbSecondsPerOrder,
    pricePerMillionUnits: UNIT_PRICES.lambdaArmGbSecond * 1_000_000,
  };
}

/**
 * API key reads per entity: each warm container reads each key it uses once per cache period
 * (`cacheSeconds`), whatever it sends meanwhile, so at `entitiesPerSecond` the reads spread over
 * `entitiesPerSecond x cacheSeconds` entities. `keysPerContainer` sums, over the consumers, the keys each
 * reads, one warm container each; more containers at a higher rate scale both sides alike.
 */
export function apiKeyReadsPerEntity(options: {
  entitiesPerSecond: number;
  cacheSeconds: number;
  keysPerContainer: number;
}): number {
  const entities = options.entitiesPerSecond * options.cacheSeconds;
  return entities > 0 ? options.keysPerContainer / entities : 0;
}

/** SQS bills each 64 KB chunk of a payload as one request. */
export function sqsBilledRequests(payloadBytes: number): number {
  return Math.max(1, Math.ceil(payloadBytes / (64 * 1024)));
}

/**
 * What a deployed stack costs per month before any request: published AWS list
 * prices (us-east-1), for the bench's idle cost (packages/tools/src/bench/idle-cost.ts). A month
 * is 730 hours, as AWS prices monthly items.
 */
export const IDLE_UNIT_PRICES = {
  asOf: '2026-12, AWS us-east-1 list prices, from the pricing pages docs/cost.md names; check them for your region and date',
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

/**
 * The prices the all-in cost adds to UNIT_PRICES and IDLE_UNIT_PRICES (us-east-1, 2026-12; the pages are
 * named in docs/cost.md): X-Ray, DynamoDB storage and point-in-time recovery, KMS requests, custom metrics.
 */
export const ALL_IN_PRICES = {
  asOf: '2026-12, AWS us-east-1 list prices, from the pricing pages docs/cost.md names',
  /** X-Ray: per million traces recorded, after the first 100,000 a month. */
  xrayTracesRecordedPerMillion: 5,
  xrayFreeTracesPerMonth: 100_000,
  /** DynamoDB Standard table class, per GB-month (the first 25 GB a month free, not counted here). */
  dynamoDbStoragePerGbMonth: 0.25,
  /** Continuous backups (point-in-time recovery), per GB-month of table size. */
  dynamoDbPitrPerGbMonth: 0.2,
  /** KMS requests, per 10,000 (an AWS managed key has no monthly fee; its requests are billed). */
  kmsRequestsPer10k: 0.03,
  /** A custom metric (a name and dimension set) per month, first 10,000 metrics. */
  cloudWatchCustomMetricPerMonth: 0.3,
  cloudWatchLogsIngestionPerGb: 0.5,
  cloudWatchLogsStoragePerGbMonth: 0.03,
};
