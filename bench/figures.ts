import { percentile } from '../loadtest/report';

/**
 * The bench's arithmetic and its output lines, kept free of I/O so the unit
 * tests can pin both: percentiles, rates, ratios and the four closing lines.
 */
export interface LatencySummary {
  count: number;
  p50: number;
  p99: number;
}

export function summarizeLatencies(values: readonly number[]): LatencySummary {
  const sorted = [...values].sort((a, b) => a - b);
  return { count: sorted.length, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) };
}

/** Things per second over a span in milliseconds; 0 for an empty or instant span. */
export function perSecond(count: number, spanMs: number): number {
  return spanMs <= 0 ? 0 : count / (spanMs / 1000);
}

/** a / b, or 0 when b is 0 (a figure that was not measured must not print as Infinity). */
export function ratio(a: number, b: number): number {
  return b === 0 ? 0 : a / b;
}

export interface ClosingFigures {
  pipelineOrdersPerSecond: number;
  emulatorLimitOrdersPerSecond: number;
  consumerMessagesPerSecond: number;
  peerMessagesPerSecond: number;
  consumerRoundTripsPerMessage: number;
  peerRoundTripsPerMessage: number;
  apiReplayP50Ms: number;
  apiFirstRequestP50Ms: number;
  cleanPathCostPerMillion: number;
  defaultPlanCostPerMillion: number;
}

/** Round trips print without decimals when whole (1 vs 3), else with one. */
function count(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(1);
}

/** The four lines that close every bench run, in this exact form. */
export function closingLines(f: ClosingFigures): string[] {
  const pipelineShare = Math.round(100 * ratio(f.pipelineOrdersPerSecond, f.emulatorLimitOrdersPerSecond));
  return [
    `bench: pipeline ${f.pipelineOrdersPerSecond.toFixed(1)} orders/s = ${pipelineShare}% of the emulator limit (${f.emulatorLimitOrdersPerSecond.toFixed(1)} orders/s)`,
    `bench: consumer ${ratio(f.consumerMessagesPerSecond, f.peerMessagesPerSecond).toFixed(1)}x a Powertools-idempotency consumer (${Math.round(f.consumerMessagesPerSecond)} vs ${Math.round(f.peerMessagesPerSecond)} msg/s); round trips per message ${count(f.consumerRoundTripsPerMessage)} vs ${count(f.peerRoundTripsPerMessage)}`,
    `bench: api replay p50 ${ratio(f.apiReplayP50Ms, f.apiFirstRequestP50Ms).toFixed(2)}x first-request p50 (${Math.round(f.apiReplayP50Ms)} vs ${Math.round(f.apiFirstRequestP50Ms)} ms)`,
    `bench: cost $${f.cleanPathCostPerMillion.toFixed(2)} per million orders (clean path), $${f.defaultPlanCostPerMillion.toFixed(2)} (default plan)`,
  ];
}

export interface StepRateFigures {
  concurrency: number;
  conditionalPutPerSecond: number;
  updatePerSecond: number;
  twoItemTransactionPerSecond: number;
}

/**
 * The consumer comparison predicted from the emulator's step rates: a first
 * delivery here is one two-item transaction and two updates (provider log,
 * completion); the Powertools consumer's is a conditional put (lock) and three
 * updates (ADD, provider log, completion). Time per message is the sum of its
 * steps' times (1 / rate), so the expected ratio is the peer's sum over ours.
 */
export function consumerStepModel(r: StepRateFigures): { transactionInUpdates: number; expectedRatio: number } {
  const time = (rate: number) => ratio(1, rate);
  const ours = time(r.twoItemTransactionPerSecond) + 2 * time(r.updatePerSecond);
  const peer = time(r.conditionalPutPerSecond) + 3 * time(r.updatePerSecond);
  return {
    transactionInUpdates: ratio(time(r.twoItemTransactionPerSecond), time(r.updatePerSecond)),
    expectedRatio: ratio(peer, ours),
  };
}

export function stepRatesLine(r: StepRateFigures): string {
  const model = consumerStepModel(r);
  return `bench: emulator requests/s at concurrency ${r.concurrency}: conditional PutItem ${Math.round(r.conditionalPutPerSecond)}, UpdateItem ${Math.round(r.updatePerSecond)}, TransactWriteItems(2 items) ${Math.round(r.twoItemTransactionPerSecond)}; one transaction takes as long as ${model.transactionInUpdates.toFixed(1)} updates, so the consumer comparison is expected at ${model.expectedRatio.toFixed(1)}x here (1 transaction + 2 updates against 1 put + 3 updates)`;
}
