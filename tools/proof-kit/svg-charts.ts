/**
 * Minimal inline-SVG charts, so the HTML report is one self-contained file
 * that opens anywhere, offline, with nothing to load.
 */
export interface Series {
  name: string;
  color: string;
  points: { x: number; y: number }[];
}

const WIDTH = 640;
const HEIGHT = 240;
const PAD = { left: 56, right: 16, top: 24, bottom: 36 };

/** Colours for series beyond the few the report names itself. */
export const PALETTE = [
  '#4e79a7',
  '#f28e2b',
  '#e15759',
  '#76b7b2',
  '#59a14f',
  '#edc948',
  '#b07aa1',
  '#ff9da7',
  '#9c755f',
];

/** A vertical line at x with a label: when the run changed phase (load ended, faults off, redrive). */
export interface Mark {
  x: number;
  label: string;
}

export function lineChart(
  title: string,
  series: Series[],
  axis: { x: string; y: string },
  marks: readonly Mark[] = [],
): string {
  const all = series.flatMap((s) => s.points);
  const maxX = niceCeiling(Math.max(1, ...all.map((p) => p.x), ...marks.map((m) => m.x)));
  const maxY = niceCeiling(Math.max(1, ...all.map((p) => p.y)));
  const sx = (x: number) => PAD.left + (x / maxX) * (WIDTH - PAD.left - PAD.right);
  const sy = (y: number) => HEIGHT - PAD.bottom - (y / maxY) * (HEIGHT - PAD.top - PAD.bottom);
  const lines = series
    .map((s) => {
      const d = s.points.map((p, i) => `${i === 0 ? 'M' : 'L'}${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`).join(' ');
      // A path of one point draws nothing, and a smoke run puts every order in one bucket: draw it as a dot.
      const dot =
        s.points.length === 1
          ? `<circle class="point" data-series="${escape(s.name)}" cx="${sx(s.points[0].x).toFixed(1)}" cy="${sy(s.points[0].y).toFixed(1)}" r="4" fill="${s.color}"/>`
          : '';
      return `<path class="series" data-series="${escape(s.name)}" d="${d}" fill="none" stroke="${s.color}" stroke-width="2"/>${dot}`;
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
  return frame(title, `${axes(maxX, maxY, sx, sy, axis)}${markLines}${lines}${legend(series)}${empty}`);
}

export function barChart(
  title: string,
  bars: { label: string; value: number; color?: string }[],
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
        `<rect class="bar" data-label="${escape(b.label)}" data-value="${b.value}" x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${(slot * 0.7).toFixed(1)}" height="${(HEIGHT - PAD.bottom - y).toFixed(1)}" fill="${b.color ?? '#4e79a7'}"/>` +
        `<text x="${(x + slot * 0.35).toFixed(1)}" y="${(y - 4).toFixed(1)}" text-anchor="middle" font-size="11">${b.value}</text>` +
        `<text x="${(x + slot * 0.35).toFixed(1)}" y="${HEIGHT - PAD.bottom + 14}" text-anchor="middle" font-size="11">${escape(b.label)}</text>`
      );
    })
    .join('');
  const empty =
    bars.length === 0 ? `<text x="${WIDTH / 2}" y="${HEIGHT / 2}" text-anchor="middle" fill="#888">none</text>` : '';
  const yAxis = `<line x1="${PAD.left}" y1="${PAD.top}" x2="${PAD.left}" y2="${HEIGHT - PAD.bottom}" stroke="#999"/><text x="${PAD.left - 8}" y="${sy(maxY)}" text-anchor="end" font-size="11">${maxY}</text><text x="12" y="${HEIGHT / 2}" font-size="11" transform="rotate(-90 12 ${HEIGHT / 2})" text-anchor="middle">${escape(yLabel)}</text>`;
  return frame(title, `${yAxis}${rects}${empty}`);
}

function axes(
  maxX: number,
  maxY: number,
  sx: (x: number) => number,
  sy: (y: number) => number,
  axis: { x: string; y: string },
): string {
  const ticks = [0, 0.25, 0.5, 0.75, 1]
    .map((f) => {
      const y = maxY * f;
      return `<line x1="${PAD.left}" y1="${sy(y)}" x2="${WIDTH - PAD.right}" y2="${sy(y)}" stroke="#eee"/><text x="${PAD.left - 6}" y="${sy(y) + 4}" text-anchor="end" font-size="11">${round(y)}</text>`;
    })
    .join('');
  return (
    ticks +
    `<line x1="${PAD.left}" y1="${HEIGHT - PAD.bottom}" x2="${WIDTH - PAD.right}" y2="${HEIGHT - PAD.bottom}" stroke="#999"/>` +
    [0, 0.25, 0.5, 0.75, 1]
      .map((f, i, all) => {
        const anchor = i === 0 ? 'start' : i === all.length - 1 ? 'end' : 'middle';
        return `<text class="x-tick" x="${sx(maxX * f).toFixed(1)}" y="${HEIGHT - PAD.bottom + 14}" text-anchor="${anchor}" font-size="11">${round(maxX * f)}</text>`;
      })
      .join('') +
    `<text x="${(WIDTH + PAD.left) / 2}" y="${HEIGHT - 6}" text-anchor="middle" font-size="11">${escape(axis.x)}</text>` +
    `<text x="12" y="${HEIGHT / 2}" font-size="11" transform="rotate(-90 12 ${HEIGHT / 2})" text-anchor="middle">${escape(axis.y)}</text>`
  );
}

function legend(series: Series[]): string {
  return series
    .map(
      (s, i) =>
        `<rect x="${PAD.left + 8 + (i % 4) * 140}" y="${2 + Math.floor(i / 4) * 12}" width="10" height="10" fill="${s.color}"/><text x="${PAD.left + 22 + (i % 4) * 140}" y="${11 + Math.floor(i / 4) * 12}" font-size="11">${escape(s.name)}</text>`,
    )
    .join('');
}

function frame(title: string, body: string): string {
  // Scales to its column (the report lays charts out in a grid); the viewBox keeps the drawing's proportions.
  return `<figure><figcaption>${escape(title)}</figcaption><svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="${escape(title)}" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="100%" preserveAspectRatio="xMidYMid meet">${body}</svg></figure>`;
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
