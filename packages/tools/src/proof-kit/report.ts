import * as fs from 'node:fs';
import type { DeliveryCounts } from '../local-runtime/host/delivery-evidence';
import * as path from 'node:path';
import type { Observation } from './drive';
import { faultMarksInWords } from './fault-marks';
import type { PlannedRequest } from './plan';
import { costBreakdown, UNIT_PRICES } from './prices';
import { judgeAppliedMetrics } from './metrics-check';
import type { PipelineSamples } from './sampler';
import type { ProviderFigures } from './provider-calls';
import type { Provenance } from './provenance';
import { barChart, CONSUMER_PALETTE, DASHES, escape, lineChart, OTHER_COLORS, type Series } from './svg-charts';
import { readableDuration, waterfallChart, type OrderTrace } from './trace';
import type { Verification } from './verify';
import type { ChaosCounters } from '../local-runtime/provider';
import { PROJECT_DIR } from '@exactly-once/cdk/project-dir';

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
  /**
   * The load over time, in buckets of `timelineBucketSeconds` (a second, or less for a short load, so a
   * 3-second run still draws a curve): requests started in each, per second, and their latency.
   */
  timeline: { second: number; requests: number; perSecond: number; p50: number; p99: number }[];
  timelineBucketSeconds: number;
  /** Where and how the run was made, and the command that makes it again; absent in results written before. */
  provenance?: Provenance;
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
    provenance?: Provenance;
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
  const bucketSeconds = timelineBucketSeconds(input.durationMs);
  const buckets = new Map<number, number[]>();
  for (const o of answered) {
    const bucket = Math.floor((o.startedAt - start) / Math.round(bucketSeconds * 1000)); // in ms: 0.3 / 0.1 < 3
    buckets.set(bucket, [...(buckets.get(bucket) ?? []), o.latencyMs]);
  }
  const timeline = [...buckets.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([bucket, values]) => {
      const sorted = values.sort((a, b) => a - b);
      return {
        second: Number((bucket * bucketSeconds).toFixed(3)),
        requests: values.length,
        perSecond: values.length / bucketSeconds,
        p50: percentile(sorted, 0.5),
        p99: percentile(sorted, 0.99),
      };
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
    timelineBucketSeconds: bucketSeconds,
    ...(input.provenance === undefined ? {} : { provenance: input.provenance }),
    ...(input.pipeline === undefined ? {} : { pipeline: input.pipeline }),
    ...(input.trace === undefined ? {} : { trace: input.trace }),
    passed: input.verification.violations.length === 0 && input.drain.drained,
  };
}

/**
 * How wide the load's time buckets are: about 60 of them over the load, between 0.1 s and 1 s, so a
 * 3-second smoke load draws 30 points rather than a line between two, and a long one stays per second.
 */
export function timelineBucketSeconds(durationMs: number): number {
  const wanted = durationMs / 1000 / 60;
  return [0.1, 0.2, 0.25, 0.5, 1].find((b) => b >= wanted) ?? 1;
}

/**
 * The run's verdict: PASS only with no violation on a drained pipeline. A run that did not drain is its
 * own verdict, never "FAIL, 0 violations": work was still under way, so the invariants were checked on
 * a state that was not final, and 0 violations proves nothing yet.
 */
export function verdictOf(violations: number, drain: { drained: boolean; waitedMs: number }): Verdict {
  if (violations > 0)
    return {
      kind: 'fail',
      headline: `FAIL, ${violations} violation(s)${drain.drained ? '' : `, and not drained after ${readableDuration(drain.waitedMs, 's')}`}`,
    };
  if (!drain.drained)
    return {
      kind: 'not-drained',
      headline: `NOT DRAINED after ${readableDuration(drain.waitedMs, 's')}`,
      detail: 'work was still in the pipeline, so the 0 violations found prove nothing yet',
    };
  return { kind: 'pass', headline: 'PASS, effects == intents' };
}

export interface Verdict {
  kind: 'pass' | 'fail' | 'not-drained';
  headline: string;
  /** Why, where the headline alone could mislead (a run that did not drain). */
  detail?: string;
}

/** The verdict in one line: its headline and, if it has one, why. */
export const verdictLine = (v: Verdict): string => (v.detail === undefined ? v.headline : `${v.headline}: ${v.detail}`);

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
    ...(r.provenance === undefined
      ? []
      : [`  provenance      ${provenanceInWords(r.provenance)}`, `  reproduce       ${r.provenance.command}`]),
    `  requests        ${r.plan.requests} (${Object.entries(r.plan.byOperation)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')})`,
    `  throughput      ${r.http.throughputPerSecond.toFixed(1)} req/s over ${(r.http.durationMs / 1000).toFixed(1)} s`,
    `  latency         p50 ${r.http.latencyMs.p50} ms, p90 ${r.http.latencyMs.p90} ms, p99 ${r.http.latencyMs.p99} ms, max ${r.http.latencyMs.max} ms`,
    `  statuses        ${statusesInWords(r)}`,
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
    `  injected        ${r.injected.poisonMessages} poison messages; ${r.injected.redriven} messages redriven from DLQs${r.injected.providerKeysForgotten ? `; ${r.injected.providerKeysForgotten} provider keys of this run forgotten before the redrive` : ''}`,
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
    `  RESULT          ${r.passed ? 'PASS: 0 violations, effects == intents' : verdictLine(verdictOf(v.violations.length, r.drain))}`,
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

/** Where the docs are from the report, by default (a report in `loadtest-results/` of the repository). */
const DOCS = 'docs/proof-kit.md';

export interface HtmlOptions {
  /** The link to docs/proof-kit.md, relative to where the report is written (see {@link writeReports}). */
  docsHref?: string;
}

export function htmlReport(r: RunResults, options: HtmlOptions = {}): string {
  const v = r.verification;
  const docsHref = options.docsHref ?? `../${DOCS}`;
  const colors = consumerColors(r);
  const verdict = verdictOf(v.violations.length, r.drain);
  const providerColor = providerColors(v.providers);
  const charts = [
    lineChart(
      {
        title: 'Latency over time (ms)',
        explain: `How long the API took to answer the requests started in each ${bucketInWords(r)}: the median (p50) and the slowest 1 % (p99).`,
      },
      [
        { name: 'p50', color: OTHER_COLORS.http, points: r.timeline.map((t) => ({ x: t.second, y: t.p50 })) },
        {
          name: 'p99',
          color: OTHER_COLORS.http,
          dash: DASHES.dashed,
          points: r.timeline.map((t) => ({ x: t.second, y: t.p99 })),
        },
      ],
      { x: 'seconds into the load', y: 'ms' },
    ),
    lineChart(
      {
        title: 'Throughput (requests started per second)',
        explain: `How many requests the load started per second, counted per ${bucketInWords(r)}; its end is where the load stopped and the drain began.`,
      },
      [
        {
          name: 'req/s',
          color: OTHER_COLORS.http,
          points: r.timeline.map((t) => ({ x: t.second, y: t.perSecond ?? t.requests })),
        },
      ],
      { x: 'seconds into the load', y: 'requests per second' },
    ),
    // The stored claims are the truth; the flushed metrics undercount under crash faults (a crashed
    // invocation flushes none), so they are a table row with that reason, not bars beside the truth.
    barChart(
      {
        title: 'Effects applied, per consumer (stored inbox claims)',
        explain: `Each consumer's effects for this run's ${v.entityNoun}, counted from the inbox claims stored beside them: each is one event applied once, so each consumer's count is the number of events of its type the run produced.`,
      },
      Object.entries(v.appliedEffects).map(([consumer, stored]) => ({
        label: consumer,
        value: stored,
        color: colors(consumer),
      })),
      'effects',
    ),
    barChart(
      {
        title: 'Duplicate deliveries suppressed, per consumer',
        explain:
          'Deliveries of an event the consumer had already applied, stopped by its inbox claim with no second effect: the at-least-once queues deliver twice, the faults make them do it more.',
      },
      Object.entries(v.duplicatesSuppressed).map(([label, value]) => ({ label, value, color: colors(label) })),
      'deliveries',
    ),
    barChart(
      {
        title: 'Dead-letter queues by cause',
        explain:
          "What sits in each consumer's DLQ at the end, by the cause the consumer recorded. The kit's own poison is expected there; a bar outlined red is not, and is a violation.",
      },
      v.deadLetters.map((d) => ({
        label: `${d.queue.split(' ')[0]}: ${d.cause}`,
        value: d.count,
        color: colors(d.queue.split(' ')[0]),
        ...(d.expected ? {} : { outline: OTHER_COLORS.failed }),
      })),
      'messages',
    ),
    ...(r.pipeline === undefined ? [] : pipelineCharts(r.pipeline, colors)),
    ...providerChart(r, providerColor),
  ].join('\n');
  const rows = (pairs: [string, string][]) =>
    pairs.map(([k, val]) => `<tr><th>${escape(k)}</th><td>${escape(val)}</td></tr>`).join('');
  const p = r.provenance;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Exactly-once proof: ${escape(r.runId)}</title>
<style>body{font-family:system-ui,sans-serif;margin:2rem;max-width:1500px}table{border-collapse:collapse}th,td{text-align:left;padding:2px 12px 2px 0;vertical-align:top}
.pass{color:#2e7d32}.fail{color:#c62828}.not-drained{color:#b26a00}.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(520px,1fr));gap:1rem 2rem;margin-top:1.5rem}
figure{margin:0}figcaption{font-weight:600}.explain{margin:.2rem 0 0;color:#444;font-size:.9rem}.waterfall{margin-top:2rem;max-width:1400px}
code{background:#f4f4f4;padding:0 3px}dt{font-weight:600;margin-top:.4rem}dd{margin-left:1.5rem}.lede{max-width:60rem}</style></head>
<body>
<h1>Exactly-once proof: <span id="verdict" class="${verdict.kind}">${escape(verdict.headline)}</span></h1>
${verdict.detail === undefined ? '' : `<p class="${verdict.kind}"><strong>${escape(verdict.detail[0].toUpperCase() + verdict.detail.slice(1))}.</strong></p>`}
<p class="lede">The proof kit sent ${r.plan.requests} requests for ${v.counts.intents} intents (each a new ${escape(v.entityNounSingular)} asked for under its own idempotency key, some sent again as a retry)${r.faults.length === 0 ? ' with no fault injected' : `, injected the faults listed below`}, waited for the pipeline to drain, then checked that every effect happened exactly once per intent. The verdict is at the top; the tables and charts below show how the run got there, and the <a href="#glossary">glossary</a> at the end says what each term means. The kit and every check are described in <a href="${escape(docsHref)}">${DOCS}</a> (in the repository this report came from; the link is relative to where the report was written).</p>
<h2>Provenance</h2>
<table id="provenance">${rows(
    p === undefined
      ? [['run', `${r.runId} on ${r.target}, profile ${r.profile}, seed ${r.seed}`]]
      : [
          ['run', `${r.runId}, started ${r.startedAt}`],
          ['commit', p.commit],
          ['target', p.stack === 'local' ? `local (the local runtime, ${p.region})` : `stack ${p.stack}, ${p.region}`],
          ['Node', p.node],
          ['profile', `${r.profile}: ${p.load}`],
          ['seed', String(r.seed)],
          ['faults', r.faults.join(', ') || 'none'],
          ['rates', p.rates],
          ['reproduce', p.command],
        ],
  )}</table>
<h2>Results</h2>
<table>${rows([
    ...(p === undefined ? [['faults', r.faults.join(', ') || 'none'] as [string, string]] : []),
    [
      'requests',
      `${r.plan.requests} (${Object.entries(r.plan.byOperation)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ')})`,
    ],
    ['statuses', statusesInWords(r)],
    ['throughput', `${r.http.throughputPerSecond.toFixed(1)} req/s over ${(r.http.durationMs / 1000).toFixed(1)} s`],
    ['latency', `p50 ${r.http.latencyMs.p50} ms, p90 ${r.http.latencyMs.p90} ms, p99 ${r.http.latencyMs.p99} ms`],
    [`${v.entityNoun} / intents`, `${v.counts.entities} / ${v.counts.intents}`],
    ['effects applied', appliedSummary(v)],
    ['metrics flushed', metricsFlushed(v)],
    ...(v.providerLines ?? []).map((line): [string, string] => ['at the provider', line.replace(/^provider /, '')]),
    ...(v.providers ?? []).map((f): [string, string] => [
      `provider ${f.provider}`,
      `${f.performed} performed, ${f.duplicates} duplicates, ${f.answersLost} answers lost, ${f.absorbedByKey} retried calls absorbed by the key`,
    ]),
    ...(chaosSummary(r.providerChaos) === ''
      ? []
      : [['provider chaos', chaosSummary(r.providerChaos)] as [string, string]]),
    ...(r.injected.poisonMessages > 0 ? [['poison', poisonInWords(r)] as [string, string]] : []),
    ...(r.injected.redriven > 0
      ? [['redriven', `${r.injected.redriven} message(s) moved from the DLQs back to their queues`] as [string, string]]
      : []),
    ...(r.injected.providerKeysForgotten
      ? [
          [
            'keys forgotten',
            `${r.injected.providerKeysForgotten} idempotency key(s) of this run forgotten by the provider before the redrive`,
          ] as [string, string],
        ]
      : []),
    ...(faultMarksInWords(r) === '' ? [] : [['fault marks', faultMarksInWords(r)] as [string, string]]),
    ['drained', `${r.drain.drained ? 'yes' : 'NO'} after ${readableDuration(r.drain.waitedMs, 's')}`],
    [
      'cost',
      r.costPerMillionEntities === undefined
        ? 'not measured'
        : `$${r.costPerMillionEntities.toFixed(2)} per million ${v.entityNoun} (${UNIT_PRICES.asOf})`,
    ],
  ])}</table>
<p class="explain">Each chart's caption says what it counts and the sentence under it what it shows. One colour is one consumer in every chart and in the trace; red means failed or unexpected; greys are the API and the relay. ${marksInWords(r.pipeline)}</p>
<div class="charts">
${charts}
</div>
${waterfallChart(r.trace?.slowest, noTraceReason(r), (kind, name) => (kind === 'consumer' ? colors(name) : providerColor(name)))}
<p class="explain">The slowest ${escape(v.entityNounSingular)}'s trace: one row per hop, from the API call on. A dotted line is a wait between a hop and the one before it (the stream's before the relay, the queue's before a consumer); a bar outlined red is a try that failed and was retried.</p>
<h2>Violations</h2>
${v.violations.length === 0 ? `<p class="${verdict.kind}">None${r.drain.drained ? '' : ' found, but the pipeline did not drain: see the verdict'}.</p>` : `<ul id="violations">${v.violations.map((x) => `<li>[${escape(x.invariant)}] ${escape(x.detail)}</li>`).join('')}</ul>`}
${glossary(docsHref, v.entityNounSingular)}
<script type="application/json" id="results">${JSON.stringify(r).replace(/</g, '\\u003c')}</script>
</body></html>
`;
}

/** The report's terms, each in a sentence, in the domain's words (`order`), with the docs for the rest. */
export const glossaryTerms = (entity: string): [string, string][] => [
  [
    'intent',
    `What a caller asked for once, under one idempotency key: a new ${entity}. Retries with the same key are the same intent; the verdict wants exactly one entity per intent the API accepted, and none for one it refused.`,
  ],
  [
    'effect',
    'What a consumer does for an event, outside its queue: a row written, points granted, a provider called. Exactly once per event and consumer is the property under proof.',
  ],
  [
    'replay',
    "A retried request answered from the API's idempotency record with the first answer, without doing the work again (a 201 marked as a replay).",
  ],
  [
    '409 (in progress)',
    'A retry that arrived while the first request with its key was still running: try again later.',
  ],
  [
    'duplicate delivered',
    'The same event delivered to a consumer again: the queues deliver at least once, and crashes, slow handlers, resends and redrives make them do it more.',
  ],
  [
    'duplicate suppressed',
    "A duplicate delivery the consumer's inbox claim stopped: the claim for that event was already stored, so the effect was not applied a second time.",
  ],
  [
    'stale (event ignored)',
    'An event older than what the consumer already applied for its entity (an update overtaken by a later one): acknowledged and not applied.',
  ],
  [
    'DLQ (dead-letter queue)',
    "Where a message goes when it cannot be processed: each consumer's queue has one. A message lands there at once when it can never succeed, or after its receives run out.",
  ],
  [
    'DLQ cause',
    'Why a message is in a DLQ, as the consumer recorded it: SchemaViolation (not an event: the poison the kit sends), EventIdReused (one id, other content), OccurredInFuture (stamped past the clock margin), or retries exhausted.',
  ],
  ['poison', 'Messages the kit sends straight to the queues that are not events: each must go to a DLQ at once.'],
  [
    'redrive',
    'Moving DLQ messages back to their queue, as an operator does after a fix: applied events must be suppressed, the rest applied once.',
  ],
  [
    'transient failure',
    'A try that failed in a way worth retrying (a timeout, an outage): the message comes back after a backoff.',
  ],
  [
    'answers lost',
    "Calls the provider performed whose answer never reached the consumer (dropped, or the consumer gave up waiting): the consumer retries with the same key, and the provider's key turns the retry into a replay.",
  ],
  [
    'absorbed by the key',
    "Retried provider calls that made no new effect: the provider's idempotency key replayed the stored answer, or answered 409 while the first call ran.",
  ],
  [
    'keys forgotten',
    "This run's idempotency keys the provider was made to forget before the redrive, as a real one does after its window: the redriven events must then be stopped by the consumers' own inbox claims.",
  ],
  ['effect lag', "From the API accepting a request to the consumer's effect for it, at the provider."],
  [
    'drained / not drained',
    'Drained: no outbox item left to send and no message queued or in flight, twice in a row. A run that did not drain within its bound has its own verdict: its 0 violations prove nothing yet.',
  ],
  [
    'fault mark',
    'How many times an enabled fault left a trace. A fault with NO MARK fired nowhere: the run proves nothing about it.',
  ],
  [
    'outbox pending',
    'Events written with their entity and not yet published to the queues by the relay or the sweeper.',
  ],
  [
    'in flight',
    'Messages a consumer has received and not yet deleted (being processed, or waiting for their visibility timeout).',
  ],
];

function glossary(docsHref: string, entity: string): string {
  return `<h2 id="glossary">Glossary</h2>
<dl>${glossaryTerms(entity)
    .map(([term, meaning]) => `<dt>${escape(term)}</dt><dd>${escape(meaning)}</dd>`)
    .join('')}</dl>
<p>More in <a href="${escape(docsHref)}">${DOCS}</a>: the faults and what each injects, what is verified, and how to read this report.</p>`;
}

/** What the dashed vertical lines mark, naming only the marks this run made. */
function marksInWords(p: PipelineSamples | undefined): string {
  const labels = [...new Set(p?.marks.map((m) => m.label) ?? [])];
  return labels.length === 0
    ? ''
    : `The dashed vertical lines mark what happened during the run: ${labels.map((l) => `"${l}"`).join(', ')}.`;
}

/** `second`, `0.1 s`: the load's time bucket in words. */
function bucketInWords(r: RunResults): string {
  const b = r.timelineBucketSeconds ?? 1;
  return b === 1 ? 'second' : `${b} s`;
}

const STATUS_WORDS: Record<string, string> = {
  '200': 'read',
  '201': 'created or replayed',
  '400': 'bad request',
  '403': 'refused',
  '404': 'not found',
  '409': 'in progress',
  '422': 'key reused with another body',
  '429': 'throttled',
  'no-response': 'no answer',
};

/** `201 x 23 (created or replayed; 3 replays), 409 x 2 (in progress)`: the load's HTTP statuses, with what each means. */
export function statusesInWords(r: Pick<RunResults, 'http'>): string {
  const entries = Object.entries(r.http.statuses).sort(([a], [b]) => a.localeCompare(b));
  if (entries.length === 0) return 'none';
  return entries
    .map(([status, n]) => {
      const words = STATUS_WORDS[status] ?? (status.startsWith('5') ? 'server error' : undefined);
      const replays = status === '201' && r.http.replaysServed > 0 ? `; ${r.http.replaysServed} replays` : '';
      return `${status} x ${n}${words === undefined ? '' : ` (${words}${replays})`}`;
    })
    .join(', ');
}

/** `abc1234 (uncommitted changes), local, us-east-1, Node v24.1.0`: the provenance in one line. */
export function provenanceInWords(p: Provenance): string {
  return `commit ${p.commit}, ${p.stack === 'local' ? 'local' : `stack ${p.stack}`}, ${p.region}, Node ${p.node}; ${p.load}; ${p.rates}`;
}

/**
 * Each consumer's colour, the same in every chart and in the trace: the consumers sorted by name take
 * {@link CONSUMER_PALETTE} in turn. A queue's label (`Fulfilment`, `Fulfilment DLQ`) takes its consumer's.
 */
export function consumerColors(r: RunResults): (consumerOrQueue: string) => string {
  const v = r.verification;
  const names = new Set<string>([
    ...Object.keys(v.appliedEffects),
    ...Object.keys(v.duplicatesSuppressed),
    ...Object.keys(v.consumerMetrics),
    ...(r.pipeline?.effectLag.map((l) => l.consumer) ?? []),
    ...(r.pipeline?.samples.flatMap((s) => Object.keys(s.counters ?? {})) ?? [])
      .map((n) => /\{consumer=([^}]*)\}/.exec(n)?.[1])
      .filter((n): n is string => n !== undefined),
  ]);
  const known = [...names].map((n) => normalized(n));
  // A queue whose consumer the results do not name (a run that judged nothing) still keeps one colour.
  const queues = [...new Set(r.pipeline?.samples.flatMap((s) => Object.keys(s.queues)) ?? [])]
    .filter((q) => q !== 'relay failures')
    .map((q) => normalized(q.replace(/ DLQ$/, '')))
    .filter((q) => !known.includes(q));
  const order = [...new Set([...known, ...queues])].sort();
  return (name) => {
    if (name === 'relay failures') return OTHER_COLORS.relay;
    const index = order.indexOf(normalized(name.replace(/ DLQ$/, '')));
    return index < 0 ? OTHER_COLORS.relay : CONSUMER_PALETTE[index % CONSUMER_PALETTE.length];
  };
}

/** `probe-fifo`, `ProbeFifo`, `Probe Fifo` -> `probefifo`: a consumer's name and its queue's output name meet. */
const normalized = (name: string) => name.toLowerCase().replace(/[^a-z0-9]/g, '');

/** Each provider's colour, from {@link OTHER_COLORS}: never a consumer's. */
function providerColors(providers: readonly ProviderFigures[] | undefined): (provider: string) => string {
  const names = (providers ?? []).map((p) => p.provider).sort();
  return (provider) => {
    const index = names.indexOf(provider);
    return OTHER_COLORS.providers[(index < 0 ? 0 : index) % OTHER_COLORS.providers.length];
  };
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
 * accepted request waited for each effect. The dashed lines mark the run's phases
 * that happened (the run records a mark only for what it did).
 */
export function pipelineCharts(
  p: PipelineSamples,
  colors: (consumerOrQueue: string) => string = () => OTHER_COLORS.relay,
): string[] {
  const marks = p.marks.map((m) => ({ x: m.second, label: m.label }));
  const axis = { x: 'seconds into the run', y: 'messages' };
  const queueNames = [...new Set(p.samples.flatMap((s) => Object.keys(s.queues)))];
  const sources = queueNames.filter((q) => !q.includes('DLQ') && !q.includes('failures'));
  const deadLetters = queueNames.filter((q) => !sources.includes(q));
  const queueSeries = (
    names: string[],
    value: (q: { visible: number; inFlight: number; delayed: number }) => number,
    sinceStart = false,
  ): Series[] =>
    names.map((name) => {
      const sampled = p.samples.filter((s) => s.queues[name] !== undefined);
      // A DLQ keeps earlier runs' messages: counted from the run's first sample, it shows this run's alone.
      const base = sinceStart && sampled.length > 0 ? value(sampled[0].queues[name]) : 0;
      return {
        name,
        color: colors(name),
        points: sampled.map((s) => ({ x: s.second, y: Math.max(0, value(s.queues[name]) - base) })),
      };
    });
  const counterNames = [...new Set(p.samples.flatMap((s) => Object.keys(s.counters ?? {})))].sort();
  // One colour per consumer; its measures told apart by the line's style, in the order given (applied solid,
  // owed calls completed dotted, duplicates dashed; with two measures, solid and dashed).
  const styleOf = (prefixes: string[], name: string) => {
    const at = prefixes.findIndex((prefix) => name.startsWith(`${prefix}{`));
    if (at === 0) return DASHES.solid;
    return at === prefixes.length - 1 ? DASHES.dashed : DASHES.dotted;
  };
  const counterSeries = (prefixes: string[]): Series[] =>
    counterNames
      .filter((n) => prefixes.some((prefix) => n.startsWith(`${prefix}{`)))
      .map((name) => {
        const consumer = /\{consumer=([^}]*)\}/.exec(name)?.[1] ?? name;
        return {
          name: counterLabel(name),
          color: colors(consumer),
          dash: styleOf(prefixes, name),
          points: p.samples
            .filter((s) => s.counters !== undefined)
            .map((s) => ({ x: s.second, y: s.counters![name] ?? 0 })),
        };
      });
  const consumers = [...new Set(p.effectLag.map((l) => l.consumer))];
  // In seconds: a redriven effect lags by minutes, which in milliseconds reads as 100,000.
  const lagSeries = consumers.flatMap((consumer) => [
    {
      name: `${consumer} p50`,
      color: colors(consumer),
      points: p.effectLag.filter((l) => l.consumer === consumer).map((l) => ({ x: l.second, y: l.p50 / 1000 })),
    },
    {
      name: `${consumer} p99`,
      color: colors(consumer),
      dash: DASHES.dashed,
      points: p.effectLag.filter((l) => l.consumer === consumer).map((l) => ({ x: l.second, y: l.p99 / 1000 })),
    },
  ]);
  return [
    lineChart(
      {
        title: 'Queue depth (visible + delayed), per source queue',
        explain:
          "Messages waiting in each consumer's queue, sampled during the run: it rises while the load and the relay publish and falls to 0 as the consumers catch up.",
      },
      queueSeries(sources, (q) => q.visible + q.delayed),
      axis,
      marks,
    ),
    lineChart(
      {
        title: 'In flight (received, not yet deleted), per source queue',
        explain:
          'Messages a consumer has taken and not yet finished. Under the crash and slow faults they stay in flight until their visibility timeout brings them back.',
      },
      queueSeries(sources, (q) => q.inFlight),
      axis,
      marks,
    ),
    lineChart(
      {
        title: 'DLQ depth, per dead-letter queue (added during this run)',
        explain:
          'Messages each dead-letter queue gained over the run (what it held before the run is left out). A redrive moves them back to their queue; the poison the kit sends stays.',
      },
      queueSeries(deadLetters, (q) => q.visible + q.inFlight + q.delayed, true),
      axis,
      marks,
    ),
    lineChart(
      {
        title: `Effects applied, owed provider calls completed and duplicates suppressed, per consumer (cumulative, ${METRICS_CAVEAT})`,
        explain:
          'What the consumers counted as they worked: effects applied (solid), owed provider calls a later copy completed after an earlier try committed the effect but not the call (dotted), and duplicate deliveries their inbox claims stopped (dashed). A crashed invocation flushes no count, so under crashes these lines end below the stored totals above.',
      },
      counterSeries(['EffectApplied', 'OwedProviderCallCompleted', 'DuplicateSuppressed']),
      { x: 'seconds into the run', y: 'events' },
      marks,
    ),
    lineChart(
      {
        title: 'Failures, injected or not, per consumer (cumulative)',
        explain:
          'Tries that failed: transient ones (solid) are retried after a backoff; permanent ones (dashed) send the message to the DLQ at once.',
      },
      counterSeries(['TransientFailure', 'PermanentFailure']),
      { x: 'seconds into the run', y: 'events' },
      marks,
    ),
    lineChart(
      {
        title: 'Effect lag, request accepted -> effect applied (by second accepted)',
        explain:
          'How long after the API accepted a request its effect happened at the provider, for the requests accepted in each 5 s: median (solid) and slowest 1 % (dashed). Retries and redrives show as lag in minutes.',
      },
      lagSeries,
      { x: 'seconds into the run (request accepted)', y: 'seconds' },
      marks,
    ),
  ];
}

/**
 * The calls at the local provider over the run, per provider, from the same figures as the report's
 * provider rows (this run's keys, counted in the provider's log), so each line ends on the number the
 * table states. None where there is no local provider.
 */
function providerChart(r: RunResults, colorOf: (provider: string) => string): string[] {
  const providers = r.verification.providers;
  if (providers === undefined || providers.length === 0) return [];
  const origin = r.pipeline?.startedAtMs ?? Date.parse(r.startedAt);
  const end = Math.max(
    ...(r.pipeline?.samples.map((s) => s.second) ?? [0]),
    ...providers
      .flatMap((f) => [...f.at.performed, ...f.at.answersLost, ...(f.at.absorbed ?? [])])
      .map((t) => (t - origin) / 1000),
  );
  const cumulative = (times: readonly number[]) => cumulativePoints(times, origin, end);
  const series = providers.flatMap((f): Series[] => [
    { name: `${f.provider} performed`, color: colorOf(f.provider), step: true, points: cumulative(f.at.performed) },
    {
      name: `${f.provider} answers lost`,
      color: colorOf(f.provider),
      dash: DASHES.dashed,
      step: true,
      points: cumulative(f.at.answersLost),
    },
    ...(f.at.absorbed === undefined
      ? []
      : [
          {
            name: `${f.provider} absorbed by the key`,
            color: colorOf(f.provider),
            dash: DASHES.dotted,
            step: true,
            points: cumulative(f.at.absorbed),
          },
        ]),
  ]);
  return [
    lineChart(
      {
        title: 'Provider calls, at the local provider (cumulative)',
        explain:
          "This run's calls at each provider, from its log: effects performed (solid), answers lost on the way back (dashed), and retries the idempotency key absorbed without a new effect (dotted). Each line ends on the figure in the provider rows above.",
      },
      series,
      { x: 'seconds into the run', y: 'calls' },
      r.pipeline?.marks.map((m) => ({ x: m.second, label: m.label })) ?? [],
    ),
  ];
}

/** A step line of how many of `times` (epoch ms) had happened by each point, from 0 to `end` seconds, at most ~200 steps. */
export function cumulativePoints(times: readonly number[], origin: number, end: number): { x: number; y: number }[] {
  const sorted = [...times].sort((a, b) => a - b).map((t) => Math.max(0, (t - origin) / 1000));
  const every = Math.max(1, Math.ceil(sorted.length / 200));
  const points = [{ x: 0, y: 0 }];
  sorted.forEach((x, i) => {
    if ((i + 1) % every === 0 || i === sorted.length - 1) points.push({ x, y: i + 1 });
  });
  points.push({ x: Math.max(end, points.at(-1)!.x), y: sorted.length });
  return points;
}

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

/** The repository's root, where docs/ is: the report links to docs/proof-kit.md relative to where it is written. */
const REPOSITORY = PROJECT_DIR;

export function writeReports(r: RunResults, directory: string): { json: string; html: string } {
  fs.mkdirSync(directory, { recursive: true });
  const json = path.join(directory, `${r.runId}.json`);
  const html = path.join(directory, `${r.runId}.html`);
  const docsHref = path.relative(path.resolve(directory), path.join(REPOSITORY, DOCS)).split(path.sep).join('/');
  fs.writeFileSync(json, `${JSON.stringify(r, null, 2)}\n`);
  fs.writeFileSync(html, htmlReport(r, { docsHref }));
  return { json, html };
}
