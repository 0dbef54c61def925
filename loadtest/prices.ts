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
};

/** One line of a cost breakdown: what is billed, how many units per order, and the price per million units. */
export interface CostComponent {
  component: string;
  unitsPerOrder: number;
  pricePerMillionUnits: number;
}

/** Dollars per million orders for one component: units per order x price per million units. */
export function componentCostPerMillionOrders(c: CostComponent): number {
  return c.unitsPerOrder * c.pricePerMillionUnits;
}

export function totalCostPerMillionOrders(components: readonly CostComponent[]): number {
  return components.reduce((sum, c) => sum + componentCostPerMillionOrders(c), 0);
}

/** Lambda GB-seconds per order priced as a per-million-orders unit (the price is per GB-s, not per million). */
export function lambdaDurationComponent(gbSecondsPerOrder: number): CostComponent {
  return {
    component: 'Lambda duration (GB-s, arm64)',
    unitsPerOrder: gbSecondsPerOrder,
    pricePerMillionUnits: UNIT_PRICES.lambdaArmGbSecond * 1_000_000,
  };
}

/** SQS bills each 64 KB chunk of a payload as one request. */
export function sqsBilledRequests(payloadBytes: number): number {
  return Math.max(1, Math.ceil(payloadBytes / (64 * 1024)));
}
