import type { SpanRecord } from '@exactly-once/runtime/trace/spans';
import { escape, niceTicks, OTHER_COLORS } from './svg-charts';
import type { Target } from './target';

/**
 * The slowest order's trace, for the report's waterfall: its spans in tree order (each under its
 * parent, siblings by start), each with its depth (a span whose parent was not recorded is a root).
 */
export interface OrderTrace {
  traceId: string;
  /** From the API span's start to the last span's end, ms. */
  durationMs: number;
  /** The event ids its relay spans published (the order's events). */
  eventIds: string[];
  spans: (SpanRecord & { depth: number })[];
  /** Spans left out of the chart (a trace with many retries), the last ones in tree order. */
  omitted: number;
  /** How many order traces the run recorded, of which this is the slowest. */
  ofTraces: number;
}

/** The most rows one waterfall draws: a trace past it (dozens of retries) shows its first ones. */
export const MAX_WATERFALL_ROWS = 40;

/**
 * The spans the local runtime recorded since `sinceMs` (`GET /__local/spans`), or undefined where
 * none are recorded (a deployed stack: its spans are log lines, and X-Ray's with the ADOT option).
 */
export async function localSpans(target: Target, sinceMs: number): Promise<SpanRecord[] | undefined> {
  if (target.kind !== 'local') return undefined;
  try {
    const response = await fetch(new URL(`/__local/spans?since=${sinceMs}`, target.apiUrl));
    if (!response.ok) return undefined;
    return ((await response.json()) as { spans: SpanRecord[] }).spans;
  } catch {
    return undefined; // a runtime without the route: reported as not recorded
  }
}

/**
 * The trace of the order that took longest from its API call to its last hop, among the traces that
 * began at the API and reached the relay (an order's: a replayed request writes no event, poison
 * sent straight to a queue has no API span). Undefined when there is none.
 */
export function slowestOrderTrace(spans: readonly SpanRecord[]): OrderTrace | undefined {
  const byTrace = new Map<string, SpanRecord[]>();
  for (const span of spans) {
    const trace = byTrace.get(span.traceId) ?? [];
    trace.push(span);
    byTrace.set(span.traceId, trace);
  }
  const fromApi = [...byTrace.values()].filter(
    (trace) => trace.some((s) => s.hop === 'api') && trace.some((s) => s.hop === 'relay'),
  );
  let slowest: { trace: SpanRecord[]; durationMs: number } | undefined;
  for (const trace of fromApi) {
    const start = Math.min(...trace.filter((s) => s.hop === 'api').map((s) => s.start));
    const durationMs = Math.max(...trace.map((s) => s.end)) - start;
    if (slowest === undefined || durationMs > slowest.durationMs) slowest = { trace, durationMs };
  }
  if (slowest === undefined) return undefined;
  // Tree order: each span under its parent, siblings by start (a span whose parent was not recorded is a root).
  const byStart = [...slowest.trace].sort((a, b) => a.start - b.start || a.end - b.end);
  const ids = new Set(byStart.map((s) => s.spanId));
  const children = new Map<string, SpanRecord[]>();
  for (const span of byStart)
    if (span.parentId !== undefined && ids.has(span.parentId))
      children.set(span.parentId, [...(children.get(span.parentId) ?? []), span]);
  const ordered: (SpanRecord & { depth: number })[] = [];
  const visit = (span: SpanRecord, depth: number) => {
    ordered.push({ ...span, depth });
    for (const child of children.get(span.spanId) ?? []) visit(child, depth + 1);
  };
  for (const root of byStart.filter((s) => s.parentId === undefined || !ids.has(s.parentId))) visit(root, 0);
  const shown = ordered.slice(0, MAX_WATERFALL_ROWS);
  return {
    traceId: byStart[0].traceId,
    durationMs: slowest.durationMs,
    eventIds: [...new Set(byStart.filter((s) => s.hop === 'relay').map((s) => s.attributes?.eventId ?? '?'))],
    spans: shown,
    omitted: ordered.length - shown.length,
    ofTraces: fromApi.length,
  };
}

/**
 * What each hop is called in the chart, and its colour: greys for the hops before the consumers, so
 * the consumers' own colours (the report's, the same in every chart) and the providers' stand out.
 */
const HOPS: Record<string, { label: string; color: string }> = {
  api: { label: 'API', color: OTHER_COLORS.http },
  'outbox-write': { label: 'outbox write', color: '#666666' },
  relay: { label: 'stream → relay', color: OTHER_COLORS.relay },
  'queue-wait': { label: 'queue wait', color: '#c7c7c7' },
  consumer: { label: 'consumer', color: '#999999' },
  'provider-call': { label: 'provider call', color: OTHER_COLORS.providers[0] },
};

/** `850 ms`, `12.5 s`: an axis tick or a duration a person reads at a glance. */
export function readableDuration(ms: number, unit: 'ms' | 's' = ms >= 2_000 ? 's' : 'ms'): string {
  return unit === 'ms' ? `${Math.round(ms)} ms` : `${Number((ms / 1000).toFixed(ms >= 100_000 ? 0 : 1))} s`;
}

const ROW = 22;
const WIDTH = 1100;
const LABEL = 300;
const RIGHT = 70;

/**
 * The trace as a waterfall: one row per span, its bar from its start to its end on a shared ms axis
 * from the API call, indented under its parent; a dotted line from the parent's end to the child's
 * start is the wait between them (the stream's, before the relay). A failed span is outlined red.
 * Without a trace, a sentence saying so instead of an empty chart.
 */
export function waterfallChart(
  trace: OrderTrace | undefined,
  whyNone: string,
  colorOf: (kind: 'consumer' | 'provider', name: string) => string | undefined = () => undefined,
): string {
  const title = 'Slowest trace, hop by hop';
  if (trace === undefined)
    return `<figure class="waterfall"><figcaption>${escape(title)}</figcaption><p id="no-spans">${escape(whyNone)}</p></figure>`;
  const origin = Math.min(...trace.spans.map((s) => s.start));
  const span = Math.max(1, ...trace.spans.map((s) => s.end - origin));
  const sx = (t: number) => LABEL + ((t - origin) / span) * (WIDTH - LABEL - RIGHT);
  const top = 24;
  const height = top + trace.spans.length * ROW + 28;
  const byId = new Map(trace.spans.map((s) => [s.spanId, s]));
  const rows = trace.spans
    .map((s, i) => {
      const y = top + i * ROW;
      const hop = HOPS[s.hop] ?? { label: s.hop, color: '#9c755f' };
      // A consumer's try in that consumer's colour, a provider call in its provider's: as in the charts above.
      const color =
        (s.hop === 'consumer' && s.attributes?.consumer !== undefined
          ? colorOf('consumer', s.attributes.consumer)
          : s.hop === 'provider-call' && s.attributes?.provider !== undefined
            ? colorOf('provider', s.attributes.provider)
            : undefined) ?? hop.color;
      const details = [
        s.attributes?.consumer ?? s.attributes?.provider,
        Number(s.attributes?.receiveCount ?? '1') > 1 ? `receive ${s.attributes?.receiveCount}` : undefined,
      ].filter((d) => d !== undefined);
      const label = `${hop.label}${details.length === 0 ? '' : ` (${details.join(', ')})`}`;
      const failed = s.attributes?.error === 'true';
      const x = sx(s.start);
      const width = Math.max(2, sx(s.end) - x);
      const parent = s.parentId === undefined ? undefined : byId.get(s.parentId);
      const wait =
        parent !== undefined && s.start > parent.end
          ? `<line class="wait" x1="${sx(parent.end).toFixed(1)}" y1="${y + ROW / 2}" x2="${x.toFixed(1)}" y2="${y + ROW / 2}" stroke="#999" stroke-dasharray="2 3"/>`
          : '';
      const ms = s.end - s.start;
      return (
        `<g class="span" data-hop="${escape(s.hop)}" data-start-ms="${s.start - origin}" data-duration-ms="${ms}">` +
        `<text x="${8 + s.depth * 12}" y="${y + ROW / 2 + 4}" font-size="12">${escape(label)}</text>` +
        wait +
        `<rect x="${x.toFixed(1)}" y="${y + 4}" width="${width.toFixed(1)}" height="${ROW - 8}" fill="${color}"${failed ? ' stroke="#c62828" stroke-width="2"' : ''}/>` +
        `<text x="${(x + width + 4).toFixed(1)}" y="${y + ROW / 2 + 4}" font-size="11" fill="#444">${readableDuration(ms)}${failed ? ' (failed)' : ''}</text>` +
        `</g>`
      );
    })
    .join('');
  const axisY = top + trace.spans.length * ROW + 6;
  // Round steps in one unit for the whole axis (seconds past 2 s), never quarters of an odd total.
  const unit = span >= 2_000 ? 's' : 'ms';
  const ticks = niceTicks(span)
    .map((t) => {
      const x = sx(origin + t);
      return `<line x1="${x.toFixed(1)}" y1="${top - 4}" x2="${x.toFixed(1)}" y2="${axisY}" stroke="#eee"/><text class="t-tick" x="${x.toFixed(1)}" y="${axisY + 14}" text-anchor="middle" font-size="11">${readableDuration(t, unit)}</text>`;
    })
    .join('');
  const caption =
    `${title}: ${readableDuration(trace.durationMs)} from the API call to the last hop, trace ${trace.traceId}` +
    ` (${trace.eventIds.join(', ')}; the slowest of ${trace.ofTraces} trace(s) begun at the API)` +
    (trace.omitted > 0 ? `; the first ${trace.spans.length} spans, ${trace.omitted} later ones not drawn` : '');
  return (
    `<figure class="waterfall"><figcaption>${escape(caption)}</figcaption>` +
    `<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="${escape(title)}" viewBox="0 0 ${WIDTH} ${height}" width="100%">` +
    `${ticks}${rows}</svg></figure>`
  );
}
