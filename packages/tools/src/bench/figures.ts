import { percentile } from '../proof-kit/report';

/**
 * The bench's arithmetic and its output lines, kept free of I/O so the unit
 * tests can pin both: percentiles, rates, ratios, the steady window and the closing lines.
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

/**
 * Pipeline throughput without the fixed lag: from the first order completed
 * (every effect applied) to the last order accepted, the orders completed in
 * between over that span. Until the first completion the pipeline is filling,
 * after the last acceptance it is draining; in between it runs as fast as the
 * offered load lets it. Undefined when the last order was accepted before the
 * first completed (a run shorter than the lag has no steady window).
 */
export interface SteadyWindow {
  startMs: number;
  endMs: number;
  spanMs: number;
  completed: number;
  ordersPerSecond: number;
}

export function steadyWindow(acceptedAt: readonly number[], completedAt: readonly number[]): SteadyWindow | undefined {
  if (acceptedAt.length === 0 || completedAt.length === 0) return undefined;
  const startMs = Math.min(...completedAt);
  const endMs = Math.max(...acceptedAt);
  if (endMs <= startMs) return undefined;
  // The completion that opens the window is its start, not part of its rate.
  const completed = completedAt.filter((t) => t > startMs && t <= endMs).length;
  const spanMs = endMs - startMs;
  return { startMs, endMs, spanMs, completed, ordersPerSecond: perSecond(completed, spanMs) };
}

export interface ConsumerFigures {
  messagesPerSecond: number;
  /** 0 when CPU time was not measured. */
  messagesPerCpuSecond: number;
  roundTripsPerMessage: number;
}

/** This design's consumers: on the transactional inbox (`ours`) and on the sequenced ledger. */
export type DesignKind = 'ours' | 'sequenced';

/** How the closing lines and failures name each of this design's consumers. */
const DESIGN_WORDS: Record<DesignKind, { headline: string; name: string }> = {
  ours: { headline: 'exactly-once', name: 'this consumer' },
  sequenced: { headline: 'exactly-once on the sequenced ledger', name: 'this consumer on the sequenced ledger' },
};

/** The four consumers in Lambda batches with one provider (batch-comparison.ts), as the closing lines read them. */
export interface BatchFigures {
  /** What the provider is, in words: `a 50 ms HTTP provider`, `a DynamoDB-write provider`. */
  provider: string;
  plain: ConsumerFigures;
  powertools: ConsumerFigures;
  ours: ConsumerFigures;
  sequenced: ConsumerFigures;
}

export interface ClosingFigures {
  /** Steady-window orders/s; undefined when the run had no steady window. */
  pipelineOrdersPerSecond: number | undefined;
  /** Orders per CPU-second over the pipeline phase; undefined when not measured. */
  pipelineOrdersPerCpuSecond: number | undefined;
  emulatorLimitOrdersPerSecond: number;
  apiReplayP50Ms: number;
  apiFirstRequestP50Ms: number;
  cleanPathCostPerMillion: number;
  defaultPlanCostPerMillion: number;
  idleCostPerMonth: number | undefined;
  /** Batches of this many records, for every consumer. */
  batchSize: number;
  /** One entry per provider setting, in the order measured. */
  batches: BatchFigures[];
  faults: { messages: number; seed: number; ours: number; sequenced: number; plain: number; powertools: number };
}

/** Round trips print without decimals when whole (1 vs 3), else with one. */
function count(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(1);
}

/**
 * The lines that close every bench run, in this exact form; the comparison under faults is the last.
 * `orders` names the domain's entities (its proof domain's `entityNoun`).
 */
export function closingLines(f: ClosingFigures, orders = 'orders'): string[] {
  const pipeline =
    f.pipelineOrdersPerSecond === undefined
      ? `bench: pipeline steady-window throughput not measured (the last of the ${orders} was accepted before the first completed: too few ${orders} for the lag); emulator limit ${f.emulatorLimitOrdersPerSecond.toFixed(1)} ${orders}/s`
      : `bench: pipeline ${f.pipelineOrdersPerSecond.toFixed(1)} ${orders}/s over the steady window = ${Math.round(100 * ratio(f.pipelineOrdersPerSecond, f.emulatorLimitOrdersPerSecond))}% of the emulator limit (${f.emulatorLimitOrdersPerSecond.toFixed(1)} ${orders}/s)`;
  const cpu =
    f.pipelineOrdersPerCpuSecond === undefined
      ? '; per CPU-second not measured'
      : `; ${f.pipelineOrdersPerCpuSecond.toFixed(1)} ${orders} per CPU-second`;
  const idle = f.idleCostPerMonth === undefined ? '' : `; idle $${f.idleCostPerMonth.toFixed(2)} per month`;
  return [
    `${pipeline}${cpu}`,
    `bench: api replay p50 ${ratio(f.apiReplayP50Ms, f.apiFirstRequestP50Ms).toFixed(2)}x first-request p50 (${Math.round(f.apiReplayP50Ms)} vs ${Math.round(f.apiFirstRequestP50Ms)} ms)`,
    `bench: cost $${f.cleanPathCostPerMillion.toFixed(2)} per million ${orders} (clean path), $${f.defaultPlanCostPerMillion.toFixed(2)} (default plan)${idle}`,
    ...f.batches.flatMap((b) => [batchClosingLine(b, f.batchSize), batchClosingLine(b, f.batchSize, 'sequenced')]),
    `bench: double effects under crash and duplicate faults (${f.faults.messages} messages, seed ${f.faults.seed}): this ${f.faults.ours}, on the sequenced ledger ${f.faults.sequenced}, plain ${f.faults.plain}, Powertools ${f.faults.powertools}`,
  ];
}

/**
 * One of this design's consumers against the plain and Powertools ones in Lambda batches with one
 * provider: the msg/s ratios, and the messages per CPU-second beside them (the figure a machine shared
 * with other work moves least).
 */
export function batchClosingLine(b: BatchFigures, batchSize: number, kind: DesignKind = 'ours'): string {
  const { plain, powertools } = b;
  const ours = b[kind];
  const cpu =
    ours.messagesPerCpuSecond === 0 || plain.messagesPerCpuSecond === 0
      ? 'per CPU-second not measured'
      : `per CPU-second ${ratio(ours.messagesPerCpuSecond, plain.messagesPerCpuSecond).toFixed(2)}x plain, ${ratio(ours.messagesPerCpuSecond, powertools.messagesPerCpuSecond).toFixed(2)}x Powertools (${Math.round(ours.messagesPerCpuSecond)} vs ${Math.round(plain.messagesPerCpuSecond)} and ${Math.round(powertools.messagesPerCpuSecond)})`;
  return `bench: ${DESIGN_WORDS[kind].headline} in batches of ${batchSize} with ${b.provider}: ${ratio(ours.messagesPerSecond, plain.messagesPerSecond).toFixed(2)}x the plain consumer's msg/s (${Math.round(ours.messagesPerSecond)} vs ${Math.round(plain.messagesPerSecond)}), ${ratio(ours.messagesPerSecond, powertools.messagesPerSecond).toFixed(2)}x the Powertools consumer's (${Math.round(powertools.messagesPerSecond)}); ${count(ours.roundTripsPerMessage)} round trips vs ${count(plain.roundTripsPerMessage)} and ${count(powertools.roundTripsPerMessage)}; ${cpu}`;
}

/**
 * One provider setting of the batch comparison in detail: each consumer's msg/s, messages per CPU-second,
 * round trips, and what went wrong (failed records, effects applied twice or never: all 0 expected).
 */
export function batchLine(
  provider: string,
  sides: Record<'plain' | 'powertools' | DesignKind, BatchSideFigures>,
  run: { batchSize: number; concurrency: number; rounds: number; messagesPerRound: number },
): string {
  const names = {
    plain: 'plain',
    powertools: 'Powertools',
    ours: DESIGN_WORDS.ours.name,
    sequenced: DESIGN_WORDS.sequenced.name,
  } as const;
  const parts = (Object.keys(names) as (keyof typeof names)[]).map((kind) => {
    const s = sides[kind];
    const cpu =
      s.messagesPerCpuSecond === 0
        ? 'per CPU-second not measured'
        : `${Math.round(s.messagesPerCpuSecond)} per CPU-second, ${Math.round(s.messagesPerProcessCpuSecond)} per CPU-second of the consumers' own process`;
    return `${names[kind]} ${Math.round(s.messagesPerSecond)} msg/s (${cpu}, ${count(s.roundTripsPerMessage)} round trips/msg; ${s.failed} failed, ${s.double} double, ${s.missing} missing)`;
  });
  return `bench: batches of ${run.batchSize}, ${run.concurrency} invocations at a time, ${run.rounds} rounds of ${run.messagesPerRound} messages each, provider ${provider}: ${parts.join('; ')}`;
}

export interface BatchSideFigures extends ConsumerFigures {
  /** Per CPU-second of the bench process alone (the consumers' own work, no emulator). */
  messagesPerProcessCpuSecond: number;
  failed: number;
  double: number;
  missing: number;
}

/** One consumer's figures without faults, first delivery then duplicate, with the CPU-normalised rate. */
export function consumerLine(
  name: string,
  side: {
    messagesPerSecond: { first: number; duplicate: number };
    roundTripsPerMessage: { first: number; duplicate: number };
    writeUnitsPerMessage: { first: number; duplicate: number };
    providerCallsPerMessage: { first: number; duplicate: number };
  },
  perCpuSecond: number | undefined,
  run: { messages: number; concurrency: number },
): string {
  const cpu =
    perCpuSecond === undefined ? 'per CPU-second not measured' : `${perCpuSecond.toFixed(0)} msg per CPU-second`;
  return `bench: ${name}: first delivery ${side.messagesPerSecond.first.toFixed(0)} msg/s (${cpu}), ${side.roundTripsPerMessage.first.toFixed(1)} round trips and ${side.writeUnitsPerMessage.first.toFixed(1)} WRU/msg; duplicate ${side.messagesPerSecond.duplicate.toFixed(0)} msg/s, ${side.roundTripsPerMessage.duplicate.toFixed(1)} round trips and ${side.writeUnitsPerMessage.duplicate.toFixed(1)} WRU/msg; provider calls/msg ${side.providerCallsPerMessage.first.toFixed(1)} then ${side.providerCallsPerMessage.duplicate.toFixed(1)} (${run.messages} messages at concurrency ${run.concurrency})`;
}

/** The fault comparison's detail line: the schedule, then per consumer what it did and how often it applied twice. */
export function faultLine(f: {
  messages: number;
  seed: number;
  faults: Record<string, number>;
  sides: Record<string, { deliveries: number; crashes: number; failures: number; double: number; missing: number }>;
}): string {
  const schedule = Object.entries(f.faults)
    .map(([fault, n]) => `${fault} ${n}`)
    .join(', ');
  const sides = Object.entries(f.sides)
    .map(
      ([name, s]) =>
        `${name} ${s.double} double, ${s.missing} missing (${s.deliveries} deliveries, ${s.crashes} crashes, ${s.failures} retried)`,
    )
    .join('; ');
  return `bench: faults (${f.messages} messages, seed ${f.seed}): ${schedule}; ${sides}`;
}

/**
 * The bench's one pass/fail: one of this design's consumers applied every message of the fault schedule
 * exactly once (no double, none missing). Undefined when it did; else the line that says what went
 * wrong, and `npm run bench` exits 1. The other figures are measurements, judged by a reader, not by the bench.
 */
export function faultVerdict(side: { double: number; missing: number }, kind: DesignKind = 'ours'): string | undefined {
  if (side.double === 0 && side.missing === 0) return undefined;
  return `bench: FAILED: ${DESIGN_WORDS[kind].name} applied ${side.double} messages twice and missed ${side.missing} under the fault schedule (exactly once expected)`;
}

type Judged = { failed: number; double: number; missing: number };

/**
 * Everything the bench judges, beside the measurements a reader judges: each of this design's consumers
 * under the fault schedule (faultVerdict), every effect the domain's consumers owe applied in each
 * pipeline run (counted from their inbox claims), and each of this design's consumers in the batch
 * comparison applying each message once with no record failed. One line per failure; `npm run bench`
 * exits 1 on any.
 */
export function benchFailures(f: {
  faults: Record<DesignKind, { double: number; missing: number }>;
  pipelines: readonly { name: string; effectsMissing: number; effectsOwed: number; drained: boolean }[];
  batches: readonly ({ provider: string } & Record<DesignKind, Judged>)[];
}): string[] {
  const failures: string[] = [];
  for (const kind of ['ours', 'sequenced'] as const) {
    const faults = faultVerdict(f.faults[kind], kind);
    if (faults !== undefined) failures.push(faults);
  }
  for (const p of f.pipelines)
    if (p.effectsMissing > 0)
      failures.push(
        `bench: FAILED: ${p.name}: ${p.effectsMissing} of ${p.effectsOwed} effects missing ${p.drained ? 'after the drain' : 'when the drain timed out (messages still queued)'} (each consumer of the domain owes one per accepted entity, counted from its inbox claims)`,
      );
  for (const b of f.batches)
    for (const kind of ['ours', 'sequenced'] as const) {
      const { failed, double, missing } = b[kind];
      if (failed + double + missing > 0)
        failures.push(
          `bench: FAILED: ${DESIGN_WORDS[kind].name} in batches with ${b.provider}: ${failed} records failed, ${double} applied twice, ${missing} missing (each message once expected)`,
        );
    }
  return failures;
}

/** One hop of the effect lag at light load, with what the hop waits on locally. */
export function hopLine(hop: string, lag: LatencySummary, waitsOn: string): string {
  return `bench: lag ${hop}: p50 ${lag.p50} ms, p99 ${lag.p99} ms (${lag.count} events; ${waitsOn})`;
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
