import {
  context as otelContext,
  isSpanContextValid,
  type Span,
  type SpanContext,
  SpanStatusCode,
  trace,
  TraceFlags,
} from '@opentelemetry/api';
import { logger } from '../runtime/observability';
import { activeSpanStore as active } from './active-span';
import { spanKept, spanSamplingFromEnv, type SpanSampling } from './span-sampling';
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
 * @example A test's sink (setSpanSink, in packages/runtime/src/trace/spans.ts)
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

/** The function's span sampling (span-sampling.ts), read from its environment at the first span. */
let sampling: SpanSampling | undefined;

/**
 * Replaces the span sampling the environment set (tests); returns the function that puts it back.
 *
 * @example Head sampling that keeps no trace: only failed, retried and slow spans are written
 * ```ts
 * const restore = setSpanSampling({ rate: 0, slowMs: 1000 });
 * ```
 */
export function setSpanSampling(next: SpanSampling): () => void {
  const previous = sampling;
  sampling = next;
  return () => {
    sampling = previous;
  };
}

/**
 * Records a finished span (one the code measured itself, like a queue wait), if its trace is sampled
 * and the span sampling keeps it (span-sampling.ts: the head's decision for its trace, or a span
 * that failed, is slow, or belongs to a retried record).
 *
 * @example A message's time in the queue, from SQS's SentTimestamp to now
 * ```ts
 * const wait = childContext(relaySpan);
 * recordSpan(wait, { hop: 'queue-wait', parentId: relaySpan.spanId, start: sentAt, end: Date.now() });
 * ```
 */
export function recordSpan(context: TraceContext, span: Omit<SpanRecord, 'traceId' | 'spanId'>): void {
  if (!context.sampled) return;
  sampling ??= spanSamplingFromEnv(process.env);
  if (!spanKept({ ...span, traceId: context.traceId }, sampling)) return;
  try {
    sink({ ...span, traceId: context.traceId, spanId: context.spanId });
  } catch (error) {
    // Tracing is for a person looking later: it never fails the work it describes.
    logger.warn('Could not record a span', { error });
  }
}

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
 * A span that has started and not yet ended: its place in the trace, and the function that ends it.
 * {@link inSpan} opens and ends one around `work`; code that measures a hop itself (the relay's
 * publication, a message's queue wait) opens one with {@link openSpan} and ends it when the hop is over.
 *
 * @example
 * ```ts
 * const span: OpenSpan = openSpan('relay', parseTraceparent(event.traceparent), { eventId: event.eventId });
 * span.end({ failed: false });
 * ```
 */
export interface OpenSpan {
  /** Its place in the trace: what the hop hands on as its `traceparent`. */
  readonly context: TraceContext;
  /** Ends it (once): records its log line and ends its OpenTelemetry span. `end` is epoch ms, default now. */
  end(outcome: { failed: boolean; end?: number }): void;
}

/**
 * The name of the OpenTelemetry tracer the hops' spans come from (their instrumentation scope): a no-op
 * until an SDK (the ADOT layer's) registers.
 *
 * @example The hops' spans in a test's SDK
 * ```ts
 * const hops = exporter.getFinishedSpans().filter((s) => s.instrumentationScope.name === OTEL_TRACER_NAME);
 * ```
 */
export const OTEL_TRACER_NAME = 'exactly-once';

/**
 * Opens the span of one hop, a child of `parent` (a new trace without one), and, through
 * `@opentelemetry/api`, an OpenTelemetry span for it. Which trace the hop joins:
 * - a carried `parent` (a caller's header, the envelope's or the message's `traceparent`) always wins:
 *   it is how an order's trace continues across the asynchronous hops (outbox, stream, queue). When an
 *   OpenTelemetry span of another trace is active (ADOT's span for the Lambda invocation), the hop's
 *   OpenTelemetry span links to it, so the invocation and the order's trace can be found from each other;
 * - without one, the active OpenTelemetry span (ADOT's invocation span, a child of the caller's X-Ray
 *   trace) is the parent: the hop and AWS's spans share one trace id;
 * - with neither, a new trace.
 *
 * When an OpenTelemetry SDK is registered, the hop takes its OpenTelemetry span's ids, so the `Span` log
 * line, the `traceparent` handed on and the span AWS records are one span. Without one (the API is a
 * no-op), the ids are drawn as {@link childContext} draws them. The `sampled` flag is the carried
 * parent's (a new trace is sampled): the `Span` log lines do not depend on X-Ray's sampling.
 *
 * @example The queue wait, measured from SQS's SentTimestamp
 * ```ts
 * const wait = openSpan('queue-wait', relaySpan, { messageId: record.messageId }, sentAt);
 * wait.end({ failed: false, end: Date.now() });
 * ```
 */
export function openSpan(
  hop: string,
  parent: TraceContext | undefined,
  attributes?: Record<string, string>,
  start: number = Date.now(),
): OpenSpan {
  const { context, end } = open(hop, parent, attributes, start);
  return { context, end };
}

function open(
  hop: string,
  parent: TraceContext | undefined,
  attributes: Record<string, string> | undefined,
  start: number,
): OpenSpan & { otelSpan: Span } {
  const ambient = otelContext.active();
  const activeOtel = validSpanContext(trace.getSpanContext(ambient));
  const otelParent: SpanContext | undefined =
    // Nested in this process, the parent is the active span itself: keep it as it is (not remote).
    parent === undefined || parent.spanId === activeOtel?.spanId
      ? activeOtel
      : {
          traceId: parent.traceId,
          spanId: parent.spanId,
          traceFlags: parent.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
          isRemote: true,
        };
  const links = parent !== undefined && activeOtel !== undefined && activeOtel.traceId !== parent.traceId;
  const otelSpan = trace.getTracer(OTEL_TRACER_NAME).startSpan(
    hop,
    {
      startTime: start,
      ...(attributes === undefined ? {} : { attributes }),
      ...(links ? { links: [{ context: activeOtel }] } : {}),
    },
    otelParent === undefined ? trace.deleteSpan(ambient) : trace.setSpanContext(ambient, otelParent),
  );
  const own = otelSpan.spanContext();
  const sampled = parent?.sampled ?? true;
  // A no-op tracer hands back its parent's context (or an invalid one): only a real span has ids of its own.
  const context: TraceContext =
    isSpanContextValid(own) && own.spanId !== otelParent?.spanId
      ? { traceId: own.traceId, spanId: own.spanId, sampled }
      : childContext(
          otelParent === undefined ? undefined : { traceId: otelParent.traceId, spanId: otelParent.spanId, sampled },
        );
  let ended = false;
  return {
    context,
    otelSpan,
    end: ({ failed, end = Date.now() }) => {
      if (ended) return;
      ended = true;
      const recorded = failed ? { ...attributes, error: 'true' } : attributes;
      recordSpan(context, {
        hop,
        ...(otelParent === undefined ? {} : { parentId: otelParent.spanId }),
        start,
        end,
        ...(recorded === undefined ? {} : { attributes: recorded }),
      });
      if (failed) otelSpan.setStatus({ code: SpanStatusCode.ERROR });
      otelSpan.end(end);
    },
  };
}

/** The OpenTelemetry span context, if it is one a span can be a child of. */
function validSpanContext(context: SpanContext | undefined): SpanContext | undefined {
  return context !== undefined && isSpanContextValid(context) ? context : undefined;
}

/**
 * Runs `work` in a new span ({@link openSpan}: a child of `parent`, of the active OpenTelemetry span
 * without one, a new trace without either), and ends the span when `work` ends, however it ends. Code
 * `work` calls sees the span as the active one, both the mechanism's (a provider call, a log line) and
 * OpenTelemetry's (the AWS SDK's and HTTP spans ADOT records are its children).
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
  const opened = open(hop, parent, attributes, Date.now());
  const span = opened.context;
  let failed = false;
  try {
    return await otelContext.with(trace.setSpan(otelContext.active(), opened.otelSpan), () =>
      active.run(span, () => work(span)),
    );
  } catch (error) {
    failed = true;
    throw error;
  } finally {
    opened.end({ failed });
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
