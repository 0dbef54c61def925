import { SpanStore } from '@exactly-once/tools/local-runtime/spans';

/**
 * The local runtime's span store: it keeps the spans of the functions' span log lines (as Powertools
 * writes them), ignores every other line, and keeps at most its capacity, the oldest dropped first.
 */

const spanLine = (spanId: string, end: number, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    level: 'INFO',
    message: 'Span',
    timestamp: new Date(end).toISOString(),
    service: 'orders',
    traceparent: `00-${'a'.repeat(32)}-${spanId}-01`,
    span: { hop: 'consumer', traceId: 'a'.repeat(32), spanId, parentId: 'b'.repeat(16), start: end - 5, end },
    ...extra,
  });

test('span lines are recognised and kept; other lines, and span lines without a readable span, are not', () => {
  const store = new SpanStore();
  const lines = [
    spanLine('1'.repeat(16), 1_000),
    JSON.stringify({ level: 'INFO', message: 'Event not applied again' }),
    '{"message":"Span", not json',
    JSON.stringify({ message: 'Span', span: { hop: 'consumer' } }),
    'START RequestId: 1 Version: $LATEST',
  ];

  for (const line of lines) if (SpanStore.isSpanLine(line)) store.record(line);

  expect(SpanStore.isSpanLine(lines[1])).toBe(false);
  expect(SpanStore.isSpanLine(lines[4])).toBe(false);
  expect(store.since().spans).toEqual([
    {
      hop: 'consumer',
      traceId: 'a'.repeat(32),
      spanId: '1'.repeat(16),
      parentId: 'b'.repeat(16),
      start: 995,
      end: 1_000,
    },
  ]);
});

test('since() gives the spans that ended at or after a time; past its capacity the oldest are dropped and counted', () => {
  const store = new SpanStore(2);
  store.record(spanLine('1'.repeat(16), 1_000));
  store.record(spanLine('2'.repeat(16), 2_000));
  store.record(spanLine('3'.repeat(16), 3_000));

  expect(store.since().spans.map((s) => s.end)).toEqual([2_000, 3_000]);
  expect(store.since().dropped).toBe(1);
  expect(store.since(2_500).spans.map((s) => s.end)).toEqual([3_000]);
});
