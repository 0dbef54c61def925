import { randomBytes } from 'node:crypto';

/**
 * One span's place in a W3C Trace Context trace (https://www.w3.org/TR/trace-context/): the trace it
 * belongs to, its own id (the `parent-id` of the `traceparent` it hands on) and whether the trace is
 * sampled. Every hop of an order (API, outbox write, relay, queue, consumer, provider call) is a child
 * of the hop before it: the same `traceId`, a new `spanId`.
 *
 * @example
 * ```ts
 * import { parseTraceparent } from '..';
 *
 * const context: TraceContext | undefined = parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
 * context?.traceId; // '4bf92f3577b34da6a3ce929d0e0e4736'
 * ```
 */
export interface TraceContext {
  /** 32 lowercase hex characters, not all zero. */
  readonly traceId: string;
  /** 16 lowercase hex characters, not all zero: this span's id. */
  readonly spanId: string;
  /** The `sampled` flag (bit 0 of `trace-flags`): the caller recorded this trace and asks the next hop to. */
  readonly sampled: boolean;
}

const HEX_32 = /^[0-9a-f]{32}$/;
const HEX_16 = /^[0-9a-f]{16}$/;
const HEX_2 = /^[0-9a-f]{2}$/;
const ALL_ZERO = /^0+$/;

/**
 * A `traceparent` header value as a TraceContext, or undefined when it is not a valid one: the
 * receiver then starts a new trace (the W3C rule), so a bad header from a caller is never an error.
 * Version `00` must be exactly `00-<trace-id>-<parent-id>-<flags>`; a later version is read by the
 * same four fields (what follows them must begin with `-`); version `ff`, upper-case hex and all-zero
 * ids are invalid.
 *
 * @example A caller's header, or a new trace
 * ```ts
 * import { childContext, parseTraceparent } from '..';
 *
 * const span = childContext(parseTraceparent(event.headers.traceparent)); // a new trace if absent or invalid
 * ```
 */
export function parseTraceparent(value: unknown): TraceContext | undefined {
  if (typeof value !== 'string') return undefined;
  const header = value.trim();
  if (header.length < 55) return undefined;
  const version = header.slice(0, 2);
  if (!HEX_2.test(version) || version === 'ff') return undefined;
  if (version === '00' ? header.length !== 55 : header.length > 55 && header[55] !== '-') return undefined;
  if (header[2] !== '-' || header[35] !== '-' || header[52] !== '-') return undefined;
  const [, traceId, spanId, flags] = header.slice(0, 55).split('-');
  if (!HEX_32.test(traceId) || !HEX_16.test(spanId) || !HEX_2.test(flags)) return undefined;
  if (ALL_ZERO.test(traceId) || ALL_ZERO.test(spanId)) return undefined;
  return { traceId, spanId, sampled: (parseInt(flags, 16) & 1) === 1 };
}

/**
 * The `traceparent` header value of a context, version `00`.
 *
 * @example
 * ```ts
 * import { formatTraceparent } from '..';
 *
 * headers.traceparent = formatTraceparent(span); // '00-<traceId>-<spanId>-01'
 * ```
 */
export function formatTraceparent(context: TraceContext): string {
  return `00-${context.traceId}-${context.spanId}-${context.sampled ? '01' : '00'}`;
}

/**
 * Random bytes as lowercase hex: 16 for a trace id, 8 for a span id.
 *
 * @example Fixed ids in a test
 * ```ts
 * const fixed: RandomHex = (bytes) => 'ab'.repeat(bytes);
 * childContext(undefined, fixed); // { traceId: 'abab…', spanId: 'abab…', sampled: true }
 * ```
 */
export type RandomHex = (bytes: number) => string;

const cryptoHex: RandomHex = (bytes) => randomBytes(bytes).toString('hex');

/**
 * A child span of `parent`: its trace and sampled flag, a new span id. Without a parent (none came,
 * or it was invalid), a new sampled trace. `random` is for tests; ids are never all zero.
 *
 * @example The consumer's span under the relay's (the message attribute)
 * ```ts
 * import { childContext, formatTraceparent, parseTraceparent } from '..';
 *
 * const span = childContext(parseTraceparent(record.messageAttributes.traceparent?.stringValue));
 * logger.info('Consuming', { traceparent: formatTraceparent(span) });
 * ```
 */
export function childContext(parent: TraceContext | undefined, random: RandomHex = cryptoHex): TraceContext {
  return {
    traceId: parent?.traceId ?? nonZero(random, 16),
    spanId: nonZero(random, 8),
    sampled: parent?.sampled ?? true,
  };
}

function nonZero(random: RandomHex, bytes: number): string {
  for (;;) {
    const hex = random(bytes);
    if (!ALL_ZERO.test(hex)) return hex;
  }
}
