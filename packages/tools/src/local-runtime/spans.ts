import { SPAN_LOG_MESSAGE, type SpanRecord } from '@exactly-once/runtime/trace/spans';

/** How many spans the runtime keeps: about 25 000 orders of 8 hops; the oldest go first. */
export const SPAN_CAPACITY = 200_000;

/**
 * Collects the spans the functions log (`message: "Span"`, packages/runtime/src/trace/spans.ts) from
 * their stdout, where on AWS they are CloudWatch Logs lines: the hops of every order's trace, for the
 * proof kit's waterfall (`GET /__local/spans?since=<epoch ms>` on the API port).
 */
export class SpanStore {
  private spans: SpanRecord[] = [];
  private droppedCount = 0;

  constructor(private readonly capacity = SPAN_CAPACITY) {}

  /** Whether `line` is a span's log line (cheap: checked on every line a function writes). */
  static isSpanLine(line: string): boolean {
    return line.startsWith('{') && line.includes(`"message":"${SPAN_LOG_MESSAGE}"`);
  }

  /** Keeps the span of a span line; any other line, or a span line without a readable span, is ignored. */
  record(line: string): void {
    let parsed: { message?: unknown; span?: unknown };
    try {
      parsed = JSON.parse(line) as typeof parsed;
    } catch {
      return;
    }
    if (parsed.message !== SPAN_LOG_MESSAGE || !isSpan(parsed.span)) return;
    this.spans.push(parsed.span);
    if (this.spans.length > this.capacity) {
      const excess = this.spans.length - this.capacity;
      this.spans = this.spans.slice(excess);
      this.droppedCount += excess;
    }
  }

  /** Spans that ended at or after `sinceMs` (epoch ms), and how many were dropped for room over the runtime's life. */
  since(sinceMs = 0): { spans: SpanRecord[]; dropped: number } {
    return { spans: this.spans.filter((s) => s.end >= sinceMs), dropped: this.droppedCount };
  }
}

function isSpan(value: unknown): value is SpanRecord {
  const s = value as Partial<SpanRecord> | null | undefined;
  return (
    typeof s === 'object' &&
    s !== null &&
    typeof s.hop === 'string' &&
    typeof s.traceId === 'string' &&
    typeof s.spanId === 'string' &&
    (s.parentId === undefined || typeof s.parentId === 'string') &&
    typeof s.start === 'number' &&
    typeof s.end === 'number'
  );
}
