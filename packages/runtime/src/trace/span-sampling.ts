import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Which `Span` log lines are written. Every hop's span line costs CloudWatch Logs ingestion (about
 * half an order's log bytes, docs/cost.md); head sampling writes the lines of a fraction of the
 * traces, decided from the trace id alone, so every function decides the same for one trace and a
 * kept trace is kept whole. What a person must be able to find is kept whatever the rate: a span
 * that failed, every span of a redelivered record's try (receive count above 1) or of a
 * dead-lettered one, and a span at least `slowMs` long.
 *
 * @example Ten percent of the traces, and every span of a second or more
 * ```ts
 * const sampling: SpanSampling = { rate: 0.1, slowMs: 1000 };
 * ```
 */
export interface SpanSampling {
  /** The fraction of traces whose spans are all written, 0 to 1. */
  readonly rate: number;
  /** A span at least this long (ms) is written whatever the rate. */
  readonly slowMs: number;
}

/**
 * Every trace's spans, and a span of a second or more counts as slow: what a function does without
 * the stage's setting.
 *
 * @example
 * ```ts
 * DEFAULT_SPAN_SAMPLING; // { rate: 1, slowMs: 1000 }
 * ```
 */
export const DEFAULT_SPAN_SAMPLING: SpanSampling = Object.freeze({ rate: 1, slowMs: 1000 });

/**
 * The environment variables a stack sets (from the stage's `spanSampleRate` and `slowSpanMs`) and
 * the functions read once.
 *
 * @example
 * ```ts
 * fn.addEnvironment(SPAN_SAMPLING_ENV.rate, '0.1');
 * ```
 */
export const SPAN_SAMPLING_ENV = Object.freeze({ rate: 'SPAN_SAMPLE_RATE', slowMs: 'SLOW_SPAN_MS' });

/**
 * The sampling the environment sets. A missing or unreadable value falls back to the default
 * (every trace kept): a bad setting costs log bytes, never a span a person needs.
 *
 * @example
 * ```ts
 * spanSamplingFromEnv({ SPAN_SAMPLE_RATE: '0.1' }); // { rate: 0.1, slowMs: 1000 }
 * ```
 */
export function spanSamplingFromEnv(env: Record<string, string | undefined>): SpanSampling {
  const rate = Number(env[SPAN_SAMPLING_ENV.rate]);
  const slowMs = Number(env[SPAN_SAMPLING_ENV.slowMs]);
  return {
    rate: env[SPAN_SAMPLING_ENV.rate] !== undefined && rate >= 0 && rate <= 1 ? rate : DEFAULT_SPAN_SAMPLING.rate,
    slowMs:
      env[SPAN_SAMPLING_ENV.slowMs] !== undefined && Number.isFinite(slowMs) && slowMs >= 0
        ? slowMs
        : DEFAULT_SPAN_SAMPLING.slowMs,
  };
}

/**
 * Whether head sampling keeps a trace: its trace id's last 13 hex digits (52 bits, the random part
 * W3C asks trace ids to end with) read as a fraction below `rate`. A function of the id alone, so
 * the API, the relay and every consumer decide the same for one trace.
 *
 * @example
 * ```ts
 * keptByHead('4bf92f3577b34da6a3ce929d0e0e4736', 1); // true: every trace
 * keptByHead('4bf92f3577b34da6a3ce929d0e0e4736', 0); // false: none by the head
 * ```
 */
export function keptByHead(traceId: string, rate: number): boolean {
  if (rate >= 1) return true;
  if (rate <= 0) return false;
  const fraction = parseInt(traceId.slice(-13), 16) / 2 ** 52;
  return Number.isFinite(fraction) ? fraction < rate : true;
}

/** Whether the spans ended in this asynchronous context are kept whatever the head decided. */
const keepStore = new AsyncLocalStorage<{ keep: boolean }>();

/**
 * Runs `work` where every span that ends is written whatever the head sampling decided, when `keep`
 * is true (a redelivered record's try); {@link keepSpansFromNowOn} can still switch it on inside.
 *
 * @example A record's try, kept whole when it is a retry
 * ```ts
 * await keepingSpans(receiveCount > 1, () => inSpan('consumer', parent, work));
 * ```
 */
export function keepingSpans<T>(keep: boolean, work: () => Promise<T>): Promise<T> {
  return keepStore.run({ keep }, work);
}

/**
 * From now on in the enclosing {@link keepingSpans}, every span that ends is written (a record
 * that is being dead-lettered: its consumer span ends after this). Outside one, nothing.
 *
 * @example
 * ```ts
 * keepSpansFromNowOn(); // before moving the message to its DLQ
 * ```
 */
export function keepSpansFromNowOn(): void {
  const store = keepStore.getStore();
  if (store !== undefined) store.keep = true;
}

/**
 * Whether a finished span's line is written: kept by the head, or one that must always be kept
 * (failed, in a kept record's try, slow).
 *
 * @example
 * ```ts
 * spanKept({ traceId, start: 0, end: 1500, attributes: {} }, { rate: 0, slowMs: 1000 }); // true: slow
 * ```
 */
export function spanKept(
  span: { traceId: string; start: number; end: number; attributes?: Record<string, string> },
  sampling: SpanSampling,
): boolean {
  if (keptByHead(span.traceId, sampling.rate)) return true;
  if (span.attributes?.error === 'true') return true;
  if (keepStore.getStore()?.keep === true) return true;
  return span.end - span.start >= sampling.slowMs;
}
