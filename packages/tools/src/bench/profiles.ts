// The bench's profiles apart from run.ts: the phases read a profile's settings, and run.ts runs the phases.

/** The bench's sizes, rates and timeouts, by profile (`--profile quick|full`). */
export const BENCH_PROFILES = {
  quick: {
    limitOrders: 150,
    limitConcurrency: 64,
    consumerMessages: 200,
    consumerConcurrency: 16,
    /** The batch comparison: per consumer and provider, rounds of this many messages in batches of 10. */
    batchMessages: 200,
    batchRounds: 3,
    /** Invocations (batches of 10) in flight at once, for every consumer: 20 records. */
    batchConcurrency: 2,
    pipelineOrders: 200,
    /** Offered load: the drive must outlast the lag, or there is no steady window to measure. */
    pipelineOrdersPerSecond: 15,
    connections: 16,
    defaultPlanOrders: 40,
    drainTimeoutMs: 120_000,
    faultMessages: 200,
    faultSeed: 7,
    hopOrders: 10,
    hopOrdersPerSecond: 2,
    hotSkuOrders: 120,
  },
  full: {
    limitOrders: 1_000,
    limitConcurrency: 64,
    consumerMessages: 1_000,
    consumerConcurrency: 16,
    batchMessages: 500,
    batchRounds: 3,
    batchConcurrency: 2,
    pipelineOrders: 600,
    pipelineOrdersPerSecond: 30,
    connections: 16,
    defaultPlanOrders: 200,
    drainTimeoutMs: 240_000,
    faultMessages: 200,
    faultSeed: 7,
    hopOrders: 30,
    hopOrdersPerSecond: 2,
    hotSkuOrders: 300,
  },
};

/** One profile's settings (the run's sizes, rates and timeouts). */
export type BenchProfile = (typeof BENCH_PROFILES)['full'];
