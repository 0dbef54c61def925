import * as fs from 'node:fs';
import type { DeliveryCounts } from '../local-runtime/host/delivery-evidence';
import * as path from 'node:path';
import type { Observation } from './drive';
import { faultMarksInWords } from './fault-marks';
import type { PlannedRequest } from './plan';
import { costBreakdown, UNIT_PRICES } from './prices';
import { judgeAppliedMetrics } from './metrics-check';
import type { PipelineSamples, ProviderCallCounts } from './sampler';
import { barChart, escape, lineChart, PALETTE, type Series } from './svg-charts';
import { waterfallChart, type OrderTrace } from './trace';
import type { Verification } from './verify';
import type { ChaosCounters } from '../local-runtime/provider';

/**
 * The run's results: a terminal summary, a JSON file and a self-contained HTML
 * report with charts. Costs use the unit prices of prices.ts, stated with their date.
 */
export { UNIT_PRICES };

export interface CallCounts {
  /** Measured by the local runtime between the emulators and the functions, or undefined where not measured. */
  dynamodbWrites?: number;
  dynamodbReads?: number;
  sqs?: number;
  lambdaInvocations?: number;
  apiRequests: number;
  /** Consumer metrics over the run (local runtime: summed from the functions' EMF output). */
  metrics?: Record<string, number>;
  /** Local runtime: per function, counters that show which fault fired (see FaultEvidence). */
  functions?: FaultEvidence;
}

/**
 * Per function (display name), what the local host saw during the run: crashes
 * (the `crash` fault), a message redelivered while its first delivery still ran
 * (`slow`), an event arriving in a message the resend fault marked (`resend`), an event
 * stamped ahead of its send (`clock-skew`). Not measured on AWS.
 */
export type FaultEvidence = Record<string, { crashes: number } & DeliveryCounts>;

export interface RunResults {
  runId: string;
  target: string;
  seed: number;
  profile: string;
  faults: string[];
  startedAt: string;
  plan: { requests: number; byOperation: Record<string, number> };
  http: {
    durationMs: number;
    throughputPerSecond: number;
    latencyMs: { p50: number; p90: number; p99: number; max: number };
    statuses: Record<string, number>;
    replaysServed: number;
    conflicts409: number;
  };
  injected: {
    poisonMessages: number;
    redriven: number;
    /** Idempotency keys the local provider was made to forget before the redrive (`keys-forgotten`). */
    providerKeysForgotten?: number;
  };
  drain: { drained: boolean; waitedMs: number };
  verification: Verification;
  calls: CallCounts;
  /** Local runtime only: per-function evidence that each fault fired, over this run. */
  evidence?: FaultEvidence;
  /** Local provider only: what its chaos did over this run, one count per request a fault hit. */
  providerChaos?: ChaosCounters;
  perEntity: Record<string, number | undefined>;
  costPerMillionEntities?: number;
  timeline: { second: number; requests: number; p50: number; p99: number }[];
  /** The pipeline over the run's time axis (queues, consumers, effect lag), when it was sampled. */
  pipeline?: PipelineSamples;
  /**
   * The spans the local runtime recorded over the run and the slowest order's trace among them;
   * undefined where spans are not collected (a deployed stack).
   */
  trace?: { recorded: number; slowest?: OrderTrace };
  passed: boolean;
}

export function summarize(
  input: Pick<RunResults, 'runId' | 'target' | 'seed' | 'profile' | 'faults' | 'startedAt'> & {
    plan: readonly PlannedRequest[];
    observations: readonly Observation[];
    durationMs: number;
    injected: RunResults['injected'];
    drain: RunResults['drain'];
    verification: Verification;
    calls: CallCounts;
    evidence?: FaultEvidence;
    providerChaos?: ChaosCounters;
    pipeline?: PipelineSamples;
    trace?: RunResults['trace'];
  },
): RunResults {
  const answered = input.observations.filter((o) => o.status !== 'no-response');
  const latencies = answered.map((o) => o.latencyMs).sort((a, b) => a - b);
  const statuses: Record<string, number> = {};
  for (const o of input.observations) statuses[String(o.status)] = (statuses[String(o.status)] ?? 0) + 1;
  const byOperation: Record<string, number> = {};
  for (const p of input.plan) byOperation[p.op] = (byOperation[p.op] ?? 0) + 1;

  const entities = Math.max(1, input.verification.counts.entities);
  const perEntity = {
    apiRequests: input.calls.apiRequests / entities,
    lambdaInvocations: ratio(input.calls.lambdaInvocations, entities),
    dynamodbWrites: ratio(input.calls.dynamodbWrites, entities),
    dynamodbReads: ratio(input.calls.dynamodbReads, entities),
    sqsRequests: ratio(input.calls.sqs, entities),
  };
  const measured =
    perEntity.lambdaInvocations !== undefined &&
    perEntity.dynamodbWrites !== undefined &&
    perEntity.sqsRequests !== undefined;
  // Every table measured together: one write and one read line.
  const costPerMillionEntities = measured
    ? costBreakdown({
        apiRequestsPerEntity: perEntity.apiRequests,
        lambdaInvocationsPerEntity: perEntity.lambdaInvocations!,
        dynamoDb: {
          'all tables (measured)': { writeUnits: perEntity.dynamodbWrites!, readUnits: perEntity.dynamodbReads ?? 0 },
        },
        sqsRequestsPerEntity: perEntity.sqsRequests!,
      }).totalPerMillionEntities
    : undefined;

  const start = Math.min(...input.observations.map((o) => o.startedAt));
  const buckets = new Map<number, number[]>();
  for (const o of answered) {
    const second = Math.floor((o.startedAt - start) / 1000);
    buckets.set(second, [...(buckets.get(second) ?? []), o.latencyMs]);
  }
  const timeline = [...buckets.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([second, values]) => {
      const sorted = values.sort((a, b) => a - b);
      return { second, requests: values.length, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) };
    });

  return {
    runId: input.runId,
    target: input.target,
    seed: input.seed,
    profile: input.profile,
    faults: input.faults,
    startedAt: input.startedAt,
    plan: { requests: input.plan.length, byOperation },
    http: {
      durationMs: input.durationMs,
      throughputPerSecond: answered.length / Math.max(0.001, input.durationMs / 1000),
      latencyMs: {
        p50: percentile(latencies, 0.5),
        p90: percentile(latencies, 0.9),
        p99: percentile(latencies, 0.99),
        max: latencies.at(-1) ?? 0,
      },
      statuses,
      replaysServed: input.observations.filter((o) => o.replayed).length,
      conflicts409: statuses['409'] ?? 0,
    },
    injected: input.injected,
    drain: input.drain,
    verification: input.verification,
    calls: input.calls,
    evidence: input.evidence,
    providerChaos: input.providerChaos,
    perEntity,
    costPerMillionEntities,
    timeline,
    ...(input.pipeline === undefined ? {} : { pipeline: input.pipeline }),
    ...(input.trace === undefined ? {} : { trace: input.trace }),
    passed: input.verification.violations.length === 0 && input.drain.drained,
  };
}

function ratio(value: number | undefined, entities: number): number | undefined {
  return value === undefined ? undefined : value / entities;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

const fmt = (n: number | undefined, digits = 2) => (n === undefined ? 'not measured' : n.toFixed(digits));

export function terminalSummary(r: RunResults): string {
  const v = r.verification;
  const lines = [
    '',
    `Run ${r.runId} on ${r.target} (profile ${r.profile}, seed ${r.seed}, faults: ${r.faults.length ? r.faults.join(', ') : 'none'})`,
    `  requests        ${r.plan.requests} (${Object.entries(r.plan.byOperation)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')})`,
    `  throughput      ${r.http.throughputPerSecond.toFixed(1)} req/s over ${(r.http.durationMs / 1000).toFixed(1)} s`,
    `  latency         p50 ${r.http.latencyMs.p50} ms, p90 ${r.http.latencyMs.p90} ms, p99 ${r.http.latencyMs.p99} ms, max ${r.http.latencyMs.max} ms`,
    `  statuses        ${Object.entries(r.http.statuses)
      .map(([s, n]) => `${s}: ${n}`)
      .join(', ')}`,
    `  retries         ${r.http.replaysServed} replays served, ${r.http.conflicts409} answered 409 (in progress)`,
    `  applied         ${appliedSummary(v)}`,
    `  deliveries      ${
      Object.keys(v.consumerMetrics).length > 0
        ? `${METRICS_CAVEAT}: ${Object.entries(v.consumerMetrics)
            .map(
              ([c, m]) =>
                `${c}: ${m.EffectApplied ?? 0} of ${v.appliedEffects[c] ?? 0} applied, ${m.DuplicateSuppressed ?? 0} duplicates suppressed, ${m.OwedProviderCallCompleted ?? 0} owed provider calls completed, ${m.StaleEventIgnored ?? 0} stale ignored, ${m.PermanentFailure ?? 0} to DLQ, ${m.TransientFailure ?? 0} transient failures`,
            )
            .join('; ')}`
        : `duplicates suppressed (lower bound from provider repeats): ${
            Object.entries(v.duplicatesSuppressed)
              .map(([c, n]) => `${c} ${n}`)
              .join(', ') || 'none'
          }`
    }`,
    `  injected        ${r.injected.poisonMessages} poison messages; ${r.injected.redriven} messages redriven from DLQs${r.injected.providerKeysForgotten ? `; ${r.injected.providerKeysForgotten} provider keys forgotten before the redrive` : ''}`,
    ...(chaosSummary(r.providerChaos) === '' ? [] : [`  provider chaos  ${chaosSummary(r.providerChaos)}`]),
    ...(faultMarksInWords(r) === '' ? [] : [`  fault marks     ${faultMarksInWords(r)}`]),
    `  DLQ by cause    ${v.deadLetters.map((d) => `${d.queue}: ${d.cause} x${d.count}${d.expected ? '' : ' (UNEXPECTED)'}`).join('; ') || 'empty'}`,
    ...(r.injected.poisonMessages > 0 ? [`  poison          ${poisonInWords(r)}`] : []),
    `  drained         ${r.drain.drained ? 'yes' : 'NO'} after ${(r.drain.waitedMs / 1000).toFixed(1)} s`,
    `  per ${v.entityNounSingular.padEnd(11)} API ${fmt(r.perEntity.apiRequests)}, Lambda ${fmt(r.perEntity.lambdaInvocations)}, DynamoDB writes ${fmt(r.perEntity.dynamodbWrites)}, reads ${fmt(r.perEntity.dynamodbReads)}, SQS ${fmt(r.perEntity.sqsRequests)}`,
    `  cost            ${r.costPerMillionEntities === undefined ? 'not computed (calls not measured on this target)' : `$${r.costPerMillionEntities.toFixed(2)} per million ${v.entityNoun} in requests (${UNIT_PRICES.asOf}; excludes Lambda duration and storage)`}`,
    `  effects         ${v.counts.entities} ${v.entityNoun} for ${v.counts.intents} intents (${v.effectsChecked}); ${v.counts.providerKeys} provider keys checked`,
    // Counted at the provider (the local provider's log): one line each, as they are.
    ...(v.providerLines ?? []),
    r.passed
      ? `  RESULT          PASS: 0 violations, effects == intents`
      : `  RESULT          FAIL: ${v.violations.length} violation(s)${r.drain.drained ? '' : ' and the system did not drain'}`,
  ];
  for (const violation of v.violations.slice(0, 50)) lines.push(`    - [${violation.invariant}] ${violation.detail}`);
  if (v.violations.length > 50) lines.push(`    ... and ${v.violations.length - 50} more (see the JSON results)`);
  return lines.join('\n');
}

/**
 * The poison the kit sent against the DLQ entries it left, in an operator's words: a poison message that
 * crashed its batch comes back with the batch and is dead-lettered again, so entries may outnumber sends.
 */
export function poisonInWords(r: RunResults): string {
  const sent = r.injected.poisonMessages;
  const entries = r.verification.deadLetters
    .filter((d) => d.cause.startsWith('poison'))
    .reduce((n, d) => n + d.count, 0);
  const extra =
    entries > sent
      ? `; the ${entries - sent} more are copies of the same messages, dead-lettered again each time a batch they were in crashed and came back`
      : entries < sent
        ? `; ${sent - entries} not in a DLQ (yet)`
        : ': each once';
  return `${sent} poison message(s) sent, ${entries} DLQ entr${entries === 1 ? 'y' : 'ies'} for them${extra}`;
}

/**
 * `4 answers dropped after the effect, 2 answers sent late, ...`: the chaos faults that fired at the local
 * provider, by requests hit; '' when none did (or it was not measured).
 */
export function chaosSummary(c: ChaosCounters | undefined): string {
  if (c === undefined) return '';
  const parts: [number, string][] = [
    [c.answersDropped, 'answers dropped after the effect'],
    [c.slowAnswers, `answers sent late`],
    [c.rateLimited, '429s'],
    [c.burstUnavailable, `503s in ${c.burstsStarted} bursts`],
    [c.outageUnavailable + c.outageRefused, 'requests refused in the outage window'],
    [c.keysForgottenEarly, 'keys forgotten early'],
  ];
  return parts
    .filter(([n]) => n > 0)
    .map(([n, what]) => `${n} ${what}`)
    .join(', ');
}

/**
 * The consumers' metrics are flushed when an invocation ends, so an invocation that crashed (the
 * `crash` fault, an out-of-memory kill) took its counts with it: they undercount, never overcount
 * (an overcount of EffectApplied is a violation: metrics-check.ts). A commit whose provider call then
 * failed is still counted, in its own try.
 */
const METRICS_CAVEAT = 'metrics flushed (a crashed invocation flushes none)';

/** `fulfilment 20, loyalty 20 (inbox claims stored)`: what was applied, from the tables. */
function appliedSummary(v: Verification): string {
  const entries = Object.entries(v.appliedEffects);
  return entries.length === 0
    ? 'none'
    : `${entries.map(([c, n]) => `${c} ${n}`).join(', ')} (inbox claims stored for the judged ${v.entityNoun}' events)`;
}

/** `fulfilment 15 of 20 applied, loyalty 0 of 20 applied`: how much of it the metrics saw. */
function metricsFlushed(v: Verification): string {
  const consumers = Object.keys(v.consumerMetrics);
  if (consumers.length === 0) return 'not measured on this target';
  const seen = judgeAppliedMetrics(v.consumerMetrics, v.appliedEffects)
    .map(
      (j) =>
        `${j.consumer} ${j.counted} of ${j.stored} applied` +
        (j.owedCallsCompleted > 0 ? ` (and ${j.owedCallsCompleted} owed provider calls completed)` : ''),
    )
    .join(', ');
  return `${seen}; a crashed invocation flushes none`;
}

export function htmlReport(r: RunResults): string {
  const v = r.verification;
  const charts = [
    lineChart(
      'Latency over time (ms)',
      [
        { name: 'p50', color: '#4e79a7', points: r.timeline.map((t) => ({ x: t.second, y: t.p50 })) },
        { name: 'p99', color: '#e15759', points: r.timeline.map((t) => ({ x: t.second, y: t.p99 })) },
      ],
      { x: 'seconds into the run', y: 'ms' },
    ),
    lineChart(
      'Throughput (requests started per second)',
      [{ name: 'req/s', color: '#59a14f', points: r.timeline.map((t) => ({ x: t.second, y: t.requests })) }],
      {
        x: 'seconds into the run',
        y: 'requests',
      },
    ),
    // The stored claims are the truth; the flushed metrics undercount under crash faults (a crashed
    // invocation flushes none), so they are a table row with that reason, not bars beside the truth.
    barChart(
      'Effects applied, per consumer (stored inbox claims)',
      Object.entries(v.appliedEffects).map(([consumer, stored], i) => ({
        label: consumer,
        value: stored,
        color: PALETTE[i % PALETTE.length],
      })),
      'effects',
    ),
    barChart(
      'Duplicate deliveries suppressed, per consumer',
      Object.entries(v.duplicatesSuppressed).map(([label, value]) => ({ label, value, color: '#f28e2b' })),
      'deliveries',
    ),
    barChart(
      'Dead-letter queues by cause',
      v.deadLetters.map((d) => ({
        label: `${d.queue.split(' ')[0]}: ${d.cause}`,
        value: d.count,
        color: d.expected ? '#76b7b2' : '#e15759',
      })),
      'messages',
    ),
    ...(r.pipeline === undefined ? [] : pipelineCharts(r.pipeline)),
  ].join('\n');
  const rows = (pairs: [string, string][]) =>
    pairs.map(([k, val]) => `<tr><th>${escape(k)}</th><td>${escape(val)}</td></tr>`).join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Exactly-once proof: ${escape(r.runId)}</title>
<style>body{font-family:system-ui,sans-serif;margin:2rem}table{border-collapse:collapse}th,td{text-align:left;padding:2px 12px 2px 0}
.pass{color:#2e7d32}.fail{color:#c62828}.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(520px,1fr));gap:1rem 2rem;margin-top:1.5rem}
figure{margin:0}figcaption{font-weight:600}.waterfall{margin-top:2rem;max-width:1400px}</style></head>
<body>
<h1>Exactly-once proof: <span id="verdict" class="${r.passed ? 'pass' : 'fail'}">${r.passed ? 'PASS, effects == intents' : `FAIL, ${v.violations.length} violation(s)`}</span></h1>
<table>${rows([
    ['run', `${r.runId} on ${r.target}, profile ${r.profile}, seed ${r.seed}`],
    ['faults', r.faults.join(', ') || 'none'],
    [
      'requests',
      `${r.plan.requests} (${Object.entries(r.plan.byOperation)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ')})`,
    ],
    ['throughput', `${r.http.throughputPerSecond.toFixed(1)} req/s`],
    ['latency', `p50 ${r.http.latencyMs.p50} ms, p90 ${r.http.latencyMs.p90} ms, p99 ${r.http.latencyMs.p99} ms`],
    [`${v.entityNoun} / intents`, `${v.counts.entities} / ${v.counts.intents}`],
    ['effects applied', appliedSummary(v)],
    ['metrics flushed', metricsFlushed(v)],
    ...(v.providerLines ?? []).map((line): [string, string] => ['at the provider', line.replace(/^provider /, '')]),
    ...(chaosSummary(r.providerChaos) === ''
      ? []
      : [['provider chaos', chaosSummary(r.providerChaos)] as [string, string]]),
    ...(r.injected.poisonMessages > 0 ? [['poison', poisonInWords(r)] as [string, string]] : []),
    ...(faultMarksInWords(r) === '' ? [] : [['fault marks', faultMarksInWords(r)] as [string, string]]),
    [
      'cost',
      r.costPerMillionEntities === undefined
        ? 'not measured'
        : `$${r.costPerMillionEntities.toFixed(2)} per million ${v.entityNoun} (${UNIT_PRICES.asOf})`,
    ],
  ])}</table>
<div class="charts">
${charts}
</div>
${waterfallChart(r.trace?.slowest, noTraceReason(r))}
<h2>Violations</h2>
${v.violations.length === 0 ? '<p class="pass">None.</p>' : `<ul id="violations">${v.violations.map((x) => `<li>[${escape(x.invariant)}] ${escape(x.detail)}</li>`).join('')}</ul>`}
<script type="application/json" id="results">${JSON.stringify(r).replace(/</g, '\\u003c')}</script>
</body></html>
`;
}

/** Why the report draws no waterfall, in words. */
function noTraceReason(r: RunResults): string {
  if (r.trace === undefined)
    return 'No spans were recorded for this run: the local runtime records them; on AWS each hop is a "Span" log line (and an X-Ray trace with the ADOT stage option).';
  if (r.trace.recorded === 0) return 'No spans were recorded for this run.';
  return `No trace among the ${r.trace.recorded} span(s) recorded began at the API and reached the relay.`;
}

/**
 * The pipeline over the run's time axis: where the messages are (queued, in
 * flight, dead-lettered), what the consumers did with them, and how long an
 * accepted request waited for each effect. The dashed lines mark the run's phases.
 */
export function pipelineCharts(p: PipelineSamples): string[] {
  const marks = p.marks.map((m) => ({ x: m.second, label: m.label }));
  const providerSamples = p.samples.filter((s) => s.provider !== undefined);
  const axis = { x: 'seconds into the run', y: 'messages' };
  const queueNames = [...new Set(p.samples.flatMap((s) => Object.keys(s.queues)))];
  const sources = queueNames.filter((q) => !q.includes('DLQ') && !q.includes('failures'));
  const deadLetters = queueNames.filter((q) => !sources.includes(q));
  const queueSeries = (
    names: string[],
    value: (q: { visible: number; inFlight: number; delayed: number }) => number,
  ): Series[] =>
    names.map((name, i) => ({
      name,
      color: PALETTE[i % PALETTE.length],
      points: p.samples
        .filter((s) => s.queues[name] !== undefined)
        .map((s) => ({ x: s.second, y: value(s.queues[name]) })),
    }));
  const counterNames = [...new Set(p.samples.flatMap((s) => Object.keys(s.counters ?? {})))].sort();
  const counterSeries = (prefixes: string[]): Series[] =>
    counterNames
      .filter((n) => prefixes.some((prefix) => n.startsWith(`${prefix}{`)))
      .map((name, i) => ({
        name: counterLabel(name),
        color: PALETTE[i % PALETTE.length],
        points: p.samples
          .filter((s) => s.counters !== undefined)
          .map((s) => ({ x: s.second, y: s.counters![name] ?? 0 })),
      }));
  const consumers = [...new Set(p.effectLag.map((l) => l.consumer))];
  // In seconds: a redriven effect lags by minutes, which in milliseconds reads as 100,000.
  const lagSeries = consumers.flatMap((consumer, i) => [
    {
      name: `${consumer} p50`,
      color: PALETTE[(2 * i) % PALETTE.length],
      points: p.effectLag.filter((l) => l.consumer === consumer).map((l) => ({ x: l.second, y: l.p50 / 1000 })),
    },
    {
      name: `${consumer} p99`,
      color: PALETTE[(2 * i + 1) % PALETTE.length],
      points: p.effectLag.filter((l) => l.consumer === consumer).map((l) => ({ x: l.second, y: l.p99 / 1000 })),
    },
  ]);
  return [
    lineChart(
      'Queue depth (visible + delayed), per source queue',
      queueSeries(sources, (q) => q.visible + q.delayed),
      axis,
      marks,
    ),
    lineChart(
      'In flight (received, not yet deleted), per source queue',
      queueSeries(sources, (q) => q.inFlight),
      axis,
      marks,
    ),
    lineChart(
      'DLQ depth, per dead-letter queue',
      queueSeries(deadLetters, (q) => q.visible + q.inFlight + q.delayed),
      axis,
      marks,
    ),
    lineChart(
      `Effects applied, owed provider calls completed and duplicates suppressed, per consumer (cumulative, ${METRICS_CAVEAT})`,
      counterSeries(['EffectApplied', 'OwedProviderCallCompleted', 'DuplicateSuppressed']),
      { x: 'seconds into the run', y: 'events' },
      marks,
    ),
    lineChart(
      'Failures, injected or not, per consumer (cumulative)',
      counterSeries(['TransientFailure', 'PermanentFailure']),
      { x: 'seconds into the run', y: 'events' },
      marks,
    ),
    lineChart(
      'Effect lag, request accepted -> effect applied (by second accepted)',
      lagSeries,
      { x: 'seconds into the run (request accepted)', y: 'seconds' },
      marks,
    ),
    ...(providerSamples.length === 0
      ? []
      : [
          lineChart(
            'Provider calls, at the local provider (cumulative)',
            PROVIDER_SERIES.map(([key, name], i) => ({
              name,
              color: PALETTE[i % PALETTE.length],
              points: providerSamples.map((s) => ({ x: s.second, y: s.provider![key] })),
            })),
            { x: 'seconds into the run', y: 'calls' },
            marks,
          ),
        ]),
  ];
}

/** The provider chart's series: what the calls became at the provider. */
const PROVIDER_SERIES: [keyof ProviderCallCounts, string][] = [
  ['performed', 'performed'],
  ['absorbed', 'absorbed by the key'],
  ['answersLost', 'answers lost'],
  ['rateLimited', '429s'],
];

const COUNTER_LABELS: Record<string, string> = {
  EffectApplied: 'applied',
  OwedProviderCallCompleted: 'owed calls completed',
  DuplicateSuppressed: 'duplicates',
  TransientFailure: 'transient',
  PermanentFailure: 'to DLQ',
};

/** `EffectApplied{consumer=loyalty}` -> `applied (loyalty)`: short enough for the legend. */
function counterLabel(name: string): string {
  const match = /^([A-Za-z]+)\{consumer=([^}]*)\}$/.exec(name);
  return match === null ? name : `${COUNTER_LABELS[match[1]] ?? match[1]} (${match[2]})`;
}

export function writeReports(r: RunResults, directory: string): { json: string; html: string } {
  fs.mkdirSync(directory, { recursive: true });
  const json = path.join(directory, `${r.runId}.json`);
  const html = path.join(directory, `${r.runId}.html`);
  fs.writeFileSync(json, `${JSON.stringify(r, null, 2)}\n`);
  fs.writeFileSync(html, htmlReport(r));
  return { json, html };
}
