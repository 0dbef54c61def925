import type { QueueCounts } from './drain';
import type { ProviderFigures } from './provider-calls';
import type { PipelineSamples, RunResults } from './run-results';
import { cumulativePoints } from './report-statistics';
import { METRICS_CAVEAT } from './report-words';
import { CONSUMER_PALETTE, DASHES, lineChart, OTHER_COLORS, type Series } from './svg-charts';

/**
 * The report's charts over the run's time axis (the pipeline, the providers) and the colours every
 * chart and the trace share: one per consumer, one per provider.
 */

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
export function providerColors(providers: readonly ProviderFigures[] | undefined): (provider: string) => string {
  const names = (providers ?? []).map((p) => p.provider).sort();
  return (provider) => {
    const index = names.indexOf(provider);
    return OTHER_COLORS.providers[(index < 0 ? 0 : index) % OTHER_COLORS.providers.length];
  };
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
  const queueSeries = (names: string[], value: (q: QueueCounts) => number, sinceStart = false) =>
    queueLines(p, colors, names, value, sinceStart);
  const counterSeries = (prefixes: string[]) => counterLines(p, colors, prefixes);
  const lagSeries = effectLagLines(p, colors);
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

/** One line per queue of `names`, of `value` over the samples; `sinceStart`: what it gained since the first. */
function queueLines(
  p: PipelineSamples,
  colors: (consumerOrQueue: string) => string,
  names: string[],
  value: (q: QueueCounts) => number,
  sinceStart: boolean,
): Series[] {
  return names.map((name) => {
    const sampled = p.samples.filter((s) => s.queues[name] !== undefined);
    // A DLQ keeps earlier runs' messages: counted from the run's first sample, it shows this run's alone.
    const base = sinceStart && sampled.length > 0 ? value(sampled[0].queues[name]) : 0;
    return {
      name,
      color: colors(name),
      points: sampled.map((s) => ({ x: s.second, y: Math.max(0, value(s.queues[name]) - base) })),
    };
  });
}

/** One line per consumer counter named by `prefixes` (`EffectApplied{consumer=...}`), in the consumer's colour. */
function counterLines(p: PipelineSamples, colors: (consumerOrQueue: string) => string, prefixes: string[]): Series[] {
  const counterNames = [...new Set(p.samples.flatMap((s) => Object.keys(s.counters ?? {})))].sort();
  // One colour per consumer; its measures told apart by the line's style, in the order given (applied solid,
  // owed calls completed dotted, duplicates dashed; with two measures, solid and dashed).
  const styleOf = (name: string) => {
    const at = prefixes.findIndex((prefix) => name.startsWith(`${prefix}{`));
    if (at === 0) return DASHES.solid;
    return at === prefixes.length - 1 ? DASHES.dashed : DASHES.dotted;
  };
  return counterNames
    .filter((n) => prefixes.some((prefix) => n.startsWith(`${prefix}{`)))
    .map((name) => {
      const consumer = /\{consumer=([^}]*)\}/.exec(name)?.[1] ?? name;
      return {
        name: counterLabel(name),
        color: colors(consumer),
        dash: styleOf(name),
        points: p.samples
          .filter((s) => s.counters !== undefined)
          .map((s) => ({ x: s.second, y: s.counters![name] ?? 0 })),
      };
    });
}

/** Each consumer's effect lag, p50 (solid) and p99 (dashed), in seconds. */
function effectLagLines(p: PipelineSamples, colors: (consumerOrQueue: string) => string): Series[] {
  const consumers = [...new Set(p.effectLag.map((l) => l.consumer))];
  // In seconds: a redriven effect lags by minutes, which in milliseconds reads as 100,000.
  return consumers.flatMap((consumer) => [
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
}

/**
 * The calls at the local provider over the run, per provider, from the same figures as the report's
 * provider rows (this run's keys, counted in the provider's log), so each line ends on the number the
 * table states. None where there is no local provider.
 */
export function providerChart(r: RunResults, colorOf: (provider: string) => string): string[] {
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

/** What the dashed vertical lines mark, naming only the marks this run made. */
export function marksInWords(p: PipelineSamples | undefined): string {
  const labels = [...new Set(p?.marks.map((m) => m.label) ?? [])];
  return labels.length === 0
    ? ''
    : `The dashed vertical lines mark what happened during the run: ${labels.map((l) => `"${l}"`).join(', ')}.`;
}
