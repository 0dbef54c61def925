/**
 * Minimal inline-SVG charts, so the HTML report is one self-contained file
 * that opens anywhere, offline, with nothing to load.
 */
export interface Series {
  name: string;
  color: string;
  /** An SVG stroke-dasharray: one consumer's colour throughout, its measures told apart by the line's style. */
  dash?: string;
  /** A count that changes at instants (cumulative events): drawn as steps, flat until the next one, without dots. */
  step?: boolean;
  points: { x: number; y: number }[];
}

/** A chart's caption and the sentence under it saying what it shows. */
export interface ChartText {
  title: string;
  explain?: string;
}

const WIDTH = 640;
const HEIGHT = 240;
const PAD = { left: 56, right: 16, top: 24, bottom: 36 };

/**
 * One colour per consumer, the same in every chart and in the trace. Red is not among them: it means
 * "failed" or "unexpected" wherever it appears, and the colours of anything else (latency, providers,
 * the relay) are taken from {@link OTHER_COLORS}, so a colour never changes meaning between charts.
 */
export const CONSUMER_PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#b07aa1', '#edc948', '#ff9da7', '#76b7b2'];
/** Colours for what is not a consumer: the HTTP side, the relay, the providers. */
export const OTHER_COLORS = {
  http: '#333333',
  relay: '#7f7f7f',
  failed: '#e15759',
  providers: ['#8c564b', '#17becf', '#555555', '#bcbd22'],
} as const;
/** Line styles for several measures of one consumer or provider in one chart. */
export const DASHES = { solid: undefined, dashed: '6 3', dotted: '2 3', dashDot: '8 3 2 3' } as const;

/** Fewer points than this in a series and each is drawn as a dot too: a short run's line of two points says little. */
export const FEW_POINTS = 40;

/** A vertical line at x with a label: when the run changed phase (load ended, faults off, redrive). */
export interface Mark {
  x: number;
  label: string;
}

export function lineChart(
  text: string | ChartText,
  series: Series[],
  axis: { x: string; y: string },
  marks: readonly Mark[] = [],
): string {
  const all = series.flatMap((s) => s.points);
  const maxX = niceMax(Math.max(1, ...all.map((p) => p.x), ...marks.map((m) => m.x)));
  const maxY = niceMax(Math.max(1, ...all.map((p) => p.y)));
  const sx = (x: number) => PAD.left + (x / maxX) * (WIDTH - PAD.left - PAD.right);
  const sy = (y: number) => HEIGHT - PAD.bottom - (y / maxY) * (HEIGHT - PAD.top - PAD.bottom);
  const lines = series
    .map((s) => {
      const d = s.points
        .map((p, i) =>
          i === 0
            ? `M${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`
            : s.step
              ? `H${sx(p.x).toFixed(1)} V${sy(p.y).toFixed(1)}`
              : `L${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`,
        )
        .join(' ');
      // A path of one point draws nothing (a smoke run puts every order in one bucket), and a line through a
      // few samples (a 3-second load) hides where they were: draw each point as a dot too.
      const dots =
        s.points.length < FEW_POINTS && !s.step
          ? s.points
              .map(
                (p) =>
                  `<circle class="point" data-series="${escape(s.name)}" cx="${sx(p.x).toFixed(1)}" cy="${sy(p.y).toFixed(1)}" r="${s.points.length === 1 ? 4 : 2.5}" fill="${s.color}"/>`,
              )
              .join('')
          : '';
      const dash = s.dash === undefined ? '' : ` stroke-dasharray="${s.dash}"`;
      // The last value as data: what the line ends on, for a reader's tools (and the tests) to compare with the text.
      const last = s.points.at(-1) === undefined ? '' : ` data-last-y="${s.points.at(-1)!.y}"`;
      return `<path class="series" data-series="${escape(s.name)}"${last} d="${d}" fill="none" stroke="${s.color}" stroke-width="2"${dash}/>${dots}`;
    })
    .join('');
  // Each label on its own row, so marks seconds apart (faults off, then the redrive) do not overlap;
  // one in the right half is written leftward from its line, so it stays inside the chart.
  const markLines = marks
    .map((m, i) => {
      const x = sx(m.x);
      const leftward = x > (WIDTH + PAD.left) / 2;
      return (
        `<line class="mark" x1="${x.toFixed(1)}" y1="${PAD.top}" x2="${x.toFixed(1)}" y2="${HEIGHT - PAD.bottom}" stroke="#999" stroke-dasharray="4 3"/>` +
        `<text class="mark-label" x="${(leftward ? x - 3 : x + 3).toFixed(1)}" y="${PAD.top + 10 + 11 * i}" text-anchor="${leftward ? 'end' : 'start'}" font-size="10" fill="#666">${escape(m.label)}</text>`
      );
    })
    .join('');
  const empty =
    all.length === 0 ? `<text x="${WIDTH / 2}" y="${HEIGHT / 2}" text-anchor="middle" fill="#888">none</text>` : '';
  // A legend of several rows pushes the plot down rather than covering its top.
  const key = legend(series);
  const extra = Math.max(0, key.rows - 1) * LEGEND_ROW;
  return frame(
    text,
    `${key.svg}<g transform="translate(0 ${extra})">${axes(maxX, maxY, sx, sy, axis)}${markLines}${lines}${empty}</g>`,
    HEIGHT + extra,
  );
}

export function barChart(
  text: string | ChartText,
  bars: { label: string; value: number; color?: string; outline?: string }[],
  yLabel: string,
): string {
  const maxY = niceCeiling(Math.max(1, ...bars.map((b) => b.value)));
  const inner = WIDTH - PAD.left - PAD.right;
  const slot = inner / Math.max(1, bars.length);
  const sy = (y: number) => HEIGHT - PAD.bottom - (y / maxY) * (HEIGHT - PAD.top - PAD.bottom);
  const rects = bars
    .map((b, i) => {
      const x = PAD.left + i * slot + slot * 0.15;
      const y = sy(b.value);
      return (
        `<rect class="bar" data-label="${escape(b.label)}" data-value="${b.value}" x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${(slot * 0.7).toFixed(1)}" height="${(HEIGHT - PAD.bottom - y).toFixed(1)}" fill="${b.color ?? OTHER_COLORS.http}"${b.outline === undefined ? '' : ` stroke="${b.outline}" stroke-width="3"`}/>` +
        `<text x="${(x + slot * 0.35).toFixed(1)}" y="${(y - 4).toFixed(1)}" text-anchor="middle" font-size="11">${b.value}</text>` +
        barLabel(b.label, x + slot * 0.35)
      );
    })
    .join('');
  const empty =
    bars.length === 0 ? `<text x="${WIDTH / 2}" y="${HEIGHT / 2}" text-anchor="middle" fill="#888">none</text>` : '';
  const yAxis = `<line x1="${PAD.left}" y1="${PAD.top}" x2="${PAD.left}" y2="${HEIGHT - PAD.bottom}" stroke="#999"/><text x="${PAD.left - 8}" y="${sy(maxY)}" text-anchor="end" font-size="11">${maxY}</text><text x="12" y="${HEIGHT / 2}" font-size="11" transform="rotate(-90 12 ${HEIGHT / 2})" text-anchor="middle">${escape(yLabel)}</text>`;
  return frame(text, `${yAxis}${rects}${empty}`);
}

/** `fulfilment: poison (SchemaViolation)` on two lines (consumer, then cause), so neighbouring labels do not overlap. */
function barLabel(label: string, x: number): string {
  const [first, ...rest] = label.split(': ');
  const lines = rest.length === 0 ? [label] : [`${first}:`, rest.join(': ')];
  return lines
    .map(
      (line, i) =>
        `<text x="${x.toFixed(1)}" y="${HEIGHT - PAD.bottom + 14 + 12 * i}" text-anchor="middle" font-size="11">${escape(line)}</text>`,
    )
    .join('');
}

function axes(
  maxX: number,
  maxY: number,
  sx: (x: number) => number,
  sy: (y: number) => number,
  axis: { x: string; y: string },
): string {
  // Round steps (0, 10,000, 20,000 ms; 0, 50, 100 s), never quarters of the range (12,500, 37,500).
  const ticks = niceTicks(maxY, 6)
    .map((y) => {
      return `<line x1="${PAD.left}" y1="${sy(y)}" x2="${WIDTH - PAD.right}" y2="${sy(y)}" stroke="#eee"/><text x="${PAD.left - 6}" y="${sy(y) + 4}" text-anchor="end" font-size="11">${round(y)}</text>`;
    })
    .join('');
  return (
    ticks +
    `<line x1="${PAD.left}" y1="${HEIGHT - PAD.bottom}" x2="${WIDTH - PAD.right}" y2="${HEIGHT - PAD.bottom}" stroke="#999"/>` +
    niceTicks(maxX, 6)
      .map((x, i) => {
        const anchor = i === 0 ? 'start' : x >= maxX ? 'end' : 'middle';
        return `<text class="x-tick" x="${sx(x).toFixed(1)}" y="${HEIGHT - PAD.bottom + 14}" text-anchor="${anchor}" font-size="11">${round(x)}</text>`;
      })
      .join('') +
    `<text x="${(WIDTH + PAD.left) / 2}" y="${HEIGHT - 6}" text-anchor="middle" font-size="11">${escape(axis.x)}</text>` +
    `<text x="12" y="${HEIGHT / 2}" font-size="11" transform="rotate(-90 12 ${HEIGHT / 2})" text-anchor="middle">${escape(axis.y)}</text>`
  );
}

const LEGEND_ROW = 13;

/** The series' names in rows across the top, each as wide as its name (about 6.2 px a character at 11 px). */
function legend(series: Series[]): { svg: string; rows: number } {
  let x = PAD.left + 8;
  let row = 0;
  const items = series.map((s) => {
    const width = 20 + s.name.length * 6.2 + 16;
    if (x + width > WIDTH - PAD.right && x > PAD.left + 8) {
      x = PAD.left + 8;
      row += 1;
    }
    const at = { x, y: 7 + row * LEGEND_ROW };
    x += width;
    // A short line in the series' colour and style, so a dashed p99 reads as one in the legend too.
    const dash = s.dash === undefined ? '' : ` stroke-dasharray="${s.dash}"`;
    return `<line x1="${at.x}" y1="${at.y}" x2="${at.x + 16}" y2="${at.y}" stroke="${s.color}" stroke-width="3"${dash}/><text x="${at.x + 20}" y="${at.y + 4}" font-size="11">${escape(s.name)}</text>`;
  });
  return { svg: items.join(''), rows: series.length === 0 ? 0 : row + 1 };
}

function frame(text: string | ChartText, body: string, height = HEIGHT): string {
  const { title, explain } = typeof text === 'string' ? { title: text, explain: undefined } : text;
  // Scales to its column (the report lays charts out in a grid); the viewBox keeps the drawing's proportions.
  return `<figure><figcaption>${escape(title)}</figcaption><svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="${escape(title)}" viewBox="0 0 ${WIDTH} ${height}" width="100%" preserveAspectRatio="xMidYMid meet">${body}</svg>${explain === undefined ? '' : `<p class="explain">${escape(explain)}</p>`}</figure>`;
}

/**
 * Ticks for an axis from 0 to `max`: a step of 1, 2 or 5 times a power of ten, at most `most` of them,
 * so a 28,674 ms trace reads 0, 5, 10, 15, 20, 25 s rather than quarters of 28674.
 */
export function niceTicks(max: number, most = 7): number[] {
  if (!(max > 0)) return [0];
  const rough = max / (most - 1);
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((c) => c >= rough) ?? rough;
  const ticks: number[] = [];
  for (let i = 0; i * step <= max + step * 1e-9; i++) ticks.push(Number((i * step).toPrecision(12)));
  return ticks;
}

/** The axis' end: the next round step at or past `value` (21 -> 25, 197 -> 200), not the next power's 1, 2 or 5 (21 -> 50). */
function niceMax(value: number): number {
  const ticks = niceTicks(value, 6);
  const step = ticks.length > 1 ? ticks[1] : value;
  return Math.ceil(value / step - 1e-9) * step;
}

function niceCeiling(value: number): number {
  const magnitude = 10 ** Math.floor(Math.log10(value));
  return [1, 2, 5, 10].map((m) => m * magnitude).find((c) => c >= value) ?? value;
}

function round(n: number): string {
  return n >= 100 ? n.toFixed(0) : n.toFixed(n >= 10 ? 1 : 2).replace(/\.?0+$/, '');
}

export function escape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
