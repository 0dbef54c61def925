import { faultMarksInWords } from './fault-marks';
import { UNIT_PRICES } from './prices';
import { consumerColors, marksInWords, pipelineCharts, providerChart, providerColors } from './report-charts';
import { verdictOf, type RunResults } from './report-results';
import { appliedSummary, chaosSummary, metricsFlushed, poisonInWords, statusesInWords } from './report-words';
import { barChart, DASHES, escape, lineChart, OTHER_COLORS } from './svg-charts';
import { readableDuration, waterfallChart } from './trace';

/**
 * The self-contained HTML report: the verdict, the provenance and results tables, the charts, the
 * slowest entity's trace, the violations and a glossary, with the results as JSON inside.
 */

/** Where the docs are from the report, by default (a report in `loadtest-results/` of the repository). */
export const DOCS = 'docs/proof-kit.md';

export interface HtmlOptions {
  /** The link to docs/proof-kit.md, relative to where the report is written (see `writeReports` in report.ts). */
  docsHref?: string;
}

export function htmlReport(r: RunResults, options: HtmlOptions = {}): string {
  const v = r.verification;
  const docsHref = options.docsHref ?? `../${DOCS}`;
  const colors = consumerColors(r);
  const verdict = verdictOf(v.violations.length, r.drain);
  const providerColor = providerColors(v.providers);
  const charts = reportCharts(r, colors, providerColor).join('\n');
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
<table>${rows(resultPairs(r))}</table>
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

/** The report's charts, in their order on the page: the load, what was applied, the pipeline, the providers. */
function reportCharts(
  r: RunResults,
  colors: (consumerOrQueue: string) => string,
  providerColor: (provider: string) => string,
): string[] {
  const v = r.verification;
  return [
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
  ];
}

/** The results table's rows, each a label and its value in words. */
function resultPairs(r: RunResults): [string, string][] {
  const v = r.verification;
  const p = r.provenance;
  return [
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
  ];
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

/** `second`, `0.1 s`: the load's time bucket in words. */
function bucketInWords(r: RunResults): string {
  const b = r.timelineBucketSeconds ?? 1;
  return b === 1 ? 'second' : `${b} s`;
}

/** Why the report draws no waterfall, in words. */
function noTraceReason(r: RunResults): string {
  if (r.trace === undefined)
    return 'No spans were recorded for this run: the local runtime records them; on AWS each hop is a "Span" log line (and an X-Ray trace with the ADOT stage option).';
  if (r.trace.recorded === 0) return 'No spans were recorded for this run.';
  return `No trace among the ${r.trace.recorded} span(s) recorded began at the API and reached the relay.`;
}
