import { AsyncLocalStorage } from 'node:async_hooks';
import { logger } from '../runtime/observability';
import { childContext, formatTraceparent, type TraceContext } from './trace-context';

/**
 * One hop of an order's trace as it is recorded: which hop, when (epoch ms), and its place in the
 * trace. The hops the mechanism records: `api`, `outbox-write`, `relay`, `queue-wait`, `consumer`,
 * `provider-call`.
 *
 * @example A consumer's span, as its log line carries it
 * ```ts
 * const span: SpanRecord = {
 *   hop: 'consumer',
 *   traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
 *   spanId: '53995c3f42cd8ad8',
 *   parentId: '00f067aa0ba902b7',
 *   start: 1767225600000,
 *   end: 1767225600042,
 *   attributes: { consumer: 'loyalty', messageId: 'm-1' },
 * };
 * ```
 */
export interface SpanRecord {
  hop: string;
  traceId: string;
  spanId: string;
  /** The span this one is a child of; absent on a trace's first span. */
  parentId?: string;
  /** Epoch ms. */
  start: number;
  /** Epoch ms. */
  end: number;
  /** What the hop worked on (eventId, consumer, provider), and `error: 'true'` when it threw. */
  attributes?: Record<string, string>;
}

/**
 * The `message` of a span's log line: the local runtime collects the lines that carry it.
 *
 * @example A CloudWatch Logs Insights query for one order's hops
 * ```ts
 * const query = `filter message = "${SPAN_LOG_MESSAGE}" and span.traceId = "${traceId}" | sort span.start`;
 * ```
 */
export const SPAN_LOG_MESSAGE = 'Span';

/**
 * Where a finished span goes: by default one INFO log line (`message: "Span"`, the span under
 * `span`, its `traceparent` beside it), so one order's hops can be found in the logs by its trace id
 * and the local runtime can collect them. Only sampled spans are recorded.
 *
 * @example A test's sink (setSpanSink, in lambdas/exactly-once/trace/spans.ts)
 * ```ts
 * const spans: SpanRecord[] = [];
 * const sink: SpanSink = (span) => spans.push(span);
 * ```
 */
export type SpanSink = (span: SpanRecord) => void;

const logSink: SpanSink = (span) =>
  logger.info(SPAN_LOG_MESSAGE, {
    traceparent: formatTraceparent({ traceId: span.traceId, spanId: span.spanId, sampled: true }),
    span,
  });
let sink: SpanSink = logSink;

/** Replaces where spans go (tests); returns the function that puts the previous sink back. */
export function setSpanSink(next: SpanSink): () => void {
  const previous = sink;
  sink = next;
  return () => {
    sink = previous;
  };
}

/**
 * Records a finished span (one the code measured itself, like a queue wait), if its trace is sampled.
 *
 * @example A message's time in the queue, from SQS's SentTimestamp to now
 * ```ts
 * const wait = childContext(relaySpan);
 * recordSpan(wait, { hop: 'queue-wait', parentId: relaySpan.spanId, start: sentAt, end: Date.now() });
 * ```
 */
export function recordSpan(context: TraceContext, span: Omit<SpanRecord, 'traceId' | 'spanId'>): void {
  if (!context.sampled) return;
  try {
    sink({ ...span, traceId: context.traceId, spanId: context.spanId });
  } catch (error) {
    // Tracing is for a person looking later: it never fails the work it describes.
    logger.warn('Could not record a span', { error });
  }
}

const active = new AsyncLocalStorage<TraceContext>();

/**
 * The span the calling code runs in, if any.
 *
 * @example
 * ```ts
 * const traceId = activeTraceContext()?.traceId;
 * ```
 */
export function activeTraceContext(): TraceContext | undefined {
  return active.getStore();
}

/**
 * The `traceparent` of the span the calling code runs in, if any: what a log line or an outgoing call carries.
 *
 * @example
 * ```ts
 * logger.warn('Transient failure: message will be retried', { messageId, traceparent: activeTraceparent() });
 * ```
 */
export function activeTraceparent(): string | undefined {
  const context = active.getStore();
  return context === undefined ? undefined : formatTraceparent(context);
}

/**
 * Runs `work` in a new span, a child of `parent` (a new trace without one), and records the span when
 * `work` ends, however it ends. Code `work` calls sees the span as the active one, so a child span
 * (a provider call) and a log line can carry it.
 *
 * @example The consumer's span under the queue wait
 * ```ts
 * return inSpan('consumer', queueWait, () => applyTheRecord(record), { consumer: 'loyalty' });
 * ```
 */
export async function inSpan<T>(
  hop: string,
  parent: TraceContext | undefined,
  work: (span: TraceContext) => Promise<T>,
  attributes?: Record<string, string>,
): Promise<T> {
  const span = childContext(parent);
  const start = Date.now();
  let failed = false;
  try {
    return await active.run(span, () => work(span));
  } catch (error) {
    failed = true;
    throw error;
  } finally {
    const recorded = failed ? { ...attributes, error: 'true' } : attributes;
    recordSpan(span, {
      hop,
      ...(parent === undefined ? {} : { parentId: parent.spanId }),
      start,
      end: Date.now(),
      ...(recorded === undefined ? {} : { attributes: recorded }),
    });
  }
}

/**
 * {@link inSpan} under the active span (a new trace when there is none).
 *
 * @example The outbox write, under the API's span
 * ```ts
 * await inChildSpan('outbox-write', () => documents.send(new TransactWriteCommand({ TransactItems: items })));
 * ```
 */
export function inChildSpan<T>(
  hop: string,
  work: (span: TraceContext) => Promise<T>,
  attributes?: Record<string, string>,
): Promise<T> {
  return inSpan(hop, active.getStore(), work, attributes);
}
