import type { SpanRecord } from '@exactly-once/runtime/trace/spans';
import { htmlReport, type RunResults } from '@exactly-once/tools/proof-kit/report';
import { MAX_WATERFALL_ROWS, slowestOrderTrace, waterfallChart } from '@exactly-once/tools/proof-kit/trace';
import { emptyVerification, smokeRunResults } from '../support/run-results';

/**
 * The proof report's trace: the slowest order's spans (API call to last hop) picked from everything
 * the local runtime recorded, drawn as a waterfall hop by hop; a run without spans says so in words.
 */

const T0 = 1_767_225_600_000;

/** One order's hops, `slowBy` ms longer in the queue than the others. */
function orderTrace(traceId: string, slowBy = 0): SpanRecord[] {
  const id = (n: number) => `${traceId.slice(0, 15)}${n}`;
  return [
    { hop: 'api', traceId, spanId: id(1), start: T0, end: T0 + 40, attributes: { route: 'POST /orders' } },
    { hop: 'outbox-write', traceId, spanId: id(2), parentId: id(1), start: T0 + 10, end: T0 + 30 },
    {
      hop: 'relay',
      traceId,
      spanId: id(3),
      parentId: id(2),
      start: T0 + 200,
      end: T0 + 220,
      attributes: { eventId: `${traceId}.placed` },
    },
    { hop: 'queue-wait', traceId, spanId: id(4), parentId: id(3), start: T0 + 215, end: T0 + 300 + slowBy },
    {
      hop: 'consumer',
      traceId,
      spanId: id(5),
      parentId: id(4),
      start: T0 + 300 + slowBy,
      end: T0 + 360 + slowBy,
      attributes: { consumer: 'loyalty' },
    },
    {
      hop: 'provider-call',
      traceId,
      spanId: id(6),
      parentId: id(5),
      start: T0 + 320 + slowBy,
      end: T0 + 350 + slowBy,
      attributes: { provider: 'mail' },
    },
  ];
}

const A = 'a'.repeat(32);
const B = 'b'.repeat(32);
const C = 'c'.repeat(32);

test("the slowest order's trace is the one longest from its API call to its last hop; traces without an API span or a relay span are not orders", () => {
  const poison: SpanRecord[] = [{ hop: 'consumer', traceId: C, spanId: 'c'.repeat(16), start: T0, end: T0 + 99_000 }];
  const replay: SpanRecord[] = [
    { hop: 'api', traceId: 'd'.repeat(32), spanId: 'd'.repeat(16), start: T0, end: T0 + 90_000 },
  ];

  const trace = slowestOrderTrace([...orderTrace(A), ...orderTrace(B, 500), ...poison, ...replay]);

  expect(trace).toMatchObject({ traceId: B, durationMs: 860, eventIds: [`${B}.placed`], omitted: 0, ofTraces: 2 });
  expect(trace!.spans.map((s) => [s.hop, s.depth])).toEqual([
    ['api', 0],
    ['outbox-write', 1],
    ['relay', 2],
    ['queue-wait', 3],
    ['consumer', 4],
    ['provider-call', 5],
  ]);
  expect(slowestOrderTrace([...poison, ...replay])).toBeUndefined();
});

test('rows are in tree order: a redelivered try (no queue wait of its own) sits under the relay, labelled with its receive', () => {
  const retry: SpanRecord = {
    hop: 'consumer',
    traceId: A,
    spanId: 'a'.repeat(15) + '7',
    parentId: 'a'.repeat(15) + '3',
    start: T0 + 250, // starts before the first try's consumer span, which sits under its queue wait
    end: T0 + 260,
    attributes: { consumer: 'fulfilment', receiveCount: '2' },
  };

  const trace = slowestOrderTrace([...orderTrace(A), retry])!;

  expect(trace.spans.map((s) => [s.hop, s.depth])).toEqual([
    ['api', 0],
    ['outbox-write', 1],
    ['relay', 2],
    ['queue-wait', 3],
    ['consumer', 4],
    ['provider-call', 5],
    ['consumer', 3],
  ]);
  expect(waterfallChart(trace, '')).toContain('>consumer (fulfilment, receive 2)</text>');
});

test('a trace with more spans than the chart holds keeps its first ones and counts the rest', () => {
  const retries: SpanRecord[] = Array.from({ length: MAX_WATERFALL_ROWS }, (_, i) => ({
    hop: 'consumer',
    traceId: A,
    spanId: `${String(i).padStart(15, '0')}f`,
    start: T0 + 1_000 * (i + 1),
    end: T0 + 1_000 * (i + 1) + 5,
  }));

  const trace = slowestOrderTrace([...orderTrace(A), ...retries])!;

  expect(trace.spans).toHaveLength(MAX_WATERFALL_ROWS);
  expect(trace.omitted).toBe(6);
  expect(waterfallChart(trace, '')).toContain('6 later ones not drawn');
});

test('the waterfall draws one bar per hop on a shared axis from the API call, the wait before the relay dotted', () => {
  const svg = waterfallChart(slowestOrderTrace(orderTrace(A)), 'unused');

  const rows = [...svg.matchAll(/data-hop="([^"]+)" data-start-ms="(\d+)" data-duration-ms="(\d+)"/g)].map((m) => [
    m[1],
    Number(m[2]),
    Number(m[3]),
  ]);
  expect(rows).toEqual([
    ['api', 0, 40],
    ['outbox-write', 10, 20],
    ['relay', 200, 20],
    ['queue-wait', 215, 85],
    ['consumer', 300, 60],
    ['provider-call', 320, 30],
  ]);
  for (const label of [
    'API',
    'outbox write',
    'stream → relay',
    'queue wait',
    'consumer (loyalty)',
    'provider call (mail)',
  ])
    expect(svg).toContain(`>${label}</text>`);
  expect(svg.match(/class="wait"/g)).toHaveLength(1); // outbox write ends at 30, the relay starts at 200
});

const verification = emptyVerification();

test.each<[string, RunResults['trace'], string]>([
  ['not collected (AWS)', undefined, 'the local runtime records them'],
  ['collected, none recorded', { recorded: 0 }, 'No spans were recorded for this run.'],
  ['recorded, but no trace from the API', { recorded: 3 }, 'No trace among the 3 span(s) recorded began at the API'],
])('a report whose spans were %s says so instead of drawing an empty chart', (_what, trace, words) => {
  const html = htmlReport({ ...smokeRunResults(verification), ...(trace === undefined ? {} : { trace }) });

  expect(html).toContain('<p id="no-spans">');
  expect(html).toContain(words.replace(/'/g, '&#39;'));
  expect(html).not.toContain('class="span"');
});

test('a report with a trace draws its waterfall', () => {
  const slowest = slowestOrderTrace([...orderTrace(A), ...orderTrace(B, 1_500)]);
  const html = htmlReport({ ...smokeRunResults(verification), trace: { recorded: 12, slowest } });

  expect(html.match(/class="span"/g)).toHaveLength(6);
  expect(html).not.toContain('id="no-spans"');
});
