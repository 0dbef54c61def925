import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import {
  type Context,
  context as otelContext,
  type ContextManager,
  type Link,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  type SpanOptions,
  type SpanStatus,
  trace,
  TraceFlags,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import {
  activeTraceparent,
  inChildSpan,
  inSpan,
  openSpan,
  setSpanSink,
  type SpanRecord,
} from '@exactly-once/runtime/trace/spans';
import { parseTraceparent } from '@exactly-once/runtime/trace/trace-context';

/**
 * The mechanism's hops as OpenTelemetry spans, under a registered SDK: the tiny test provider below
 * stands in for the one the ADOT layer registers (a tracer that draws ids, keeps the parent it was
 * given, and collects the spans that end), with an AsyncLocalStorage context manager as the SDK's.
 * Without an SDK the API is a no-op: trace.test.ts runs every hop that way, unchanged.
 */

interface FinishedSpan {
  name: string;
  context: SpanContext;
  parent?: SpanContext;
  attributes: Record<string, unknown>;
  links: Link[];
  status?: SpanStatus;
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

class TestTracer implements Tracer {
  readonly finished: FinishedSpan[] = [];

  startSpan(name: string, options: SpanOptions = {}, parentContext: Context = otelContext.active()): Span {
    const parent = trace.getSpanContext(parentContext);
    const own: SpanContext = {
      traceId: parent?.traceId ?? hex(16),
      spanId: hex(8),
      traceFlags: TraceFlags.SAMPLED,
    };
    const record: FinishedSpan = {
      name,
      context: own,
      ...(parent === undefined ? {} : { parent }),
      attributes: { ...options.attributes },
      links: options.links ?? [],
    };
    const span: Span = {
      spanContext: () => own,
      setAttribute: (key, value) => ((record.attributes[key] = value), span),
      setAttributes: (attributes) => (Object.assign(record.attributes, attributes), span),
      addEvent: () => span,
      addLink: () => span,
      addLinks: () => span,
      setStatus: (status) => ((record.status = status), span),
      updateName: () => span,
      end: () => void this.finished.push(record),
      isRecording: () => true,
      recordException: () => undefined,
    };
    return span;
  }

  startActiveSpan<F extends (span: Span) => unknown>(name: string, ...args: unknown[]): ReturnType<F> {
    const fn = args.at(-1) as F;
    const span = this.startSpan(name, (args.length > 1 ? args[0] : {}) as SpanOptions);
    return otelContext.with(trace.setSpan(otelContext.active(), span), () => fn(span)) as ReturnType<F>;
  }
}

class AsyncContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();
  active = () => this.storage.getStore() ?? ROOT_CONTEXT;
  with = <A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    context: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> => this.storage.run(context, () => fn.call(thisArg, ...args));
  bind = <T>(_context: Context, target: T) => target;
  enable = () => this;
  disable = () => this;
}

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const CALLER = `00-${TRACE_ID}-${CALLER_SPAN}-01`;
/** ADOT's span for the Lambda invocation, of another trace (the invocation's X-Ray trace). */
const INVOCATION: SpanContext = {
  traceId: '5759e988bd862e3fe1be46a994272793',
  spanId: '53995c3f42cd8ad8',
  traceFlags: TraceFlags.SAMPLED,
};

let tracer: TestTracer;
let lines: SpanRecord[];
let restoreSink: () => void;
beforeEach(() => {
  tracer = new TestTracer();
  const provider: TracerProvider = { getTracer: () => tracer };
  trace.setGlobalTracerProvider(provider);
  otelContext.setGlobalContextManager(new AsyncContextManager());
  lines = [];
  restoreSink = setSpanSink((span) => lines.push(span));
});
afterEach(() => {
  restoreSink();
  trace.disable();
  otelContext.disable();
});

const otel = (name: string) => {
  const found = tracer.finished.filter((s) => s.name === name);
  expect(found).toHaveLength(1);
  return found[0];
};
const line = (hop: string) => {
  const found = lines.filter((s) => s.hop === hop);
  expect(found).toHaveLength(1);
  return found[0];
};
/** Runs `work` as ADOT's Lambda instrumentation runs a handler: under its active invocation span. */
const inInvocation = <T>(work: () => Promise<T>) =>
  otelContext.with(trace.setSpanContext(ROOT_CONTEXT, INVOCATION), work);

describe('the hops as OpenTelemetry spans, under a registered SDK', () => {
  test('each hop is an OpenTelemetry span with its attributes, a child of the hop it runs in, and the Span line carries its ids', async () => {
    let handedOn: string | undefined;

    await inSpan('consumer', parseTraceparent(CALLER), () =>
      inChildSpan(
        'provider-call',
        async () => {
          handedOn = activeTraceparent();
        },
        { provider: 'warehouse' },
      ),
    );

    const consumer = otel('consumer');
    const call = otel('provider-call');
    expect(consumer.parent).toMatchObject({ traceId: TRACE_ID, spanId: CALLER_SPAN, isRemote: true });
    expect(call.parent).toMatchObject({ traceId: TRACE_ID, spanId: consumer.context.spanId });
    expect(call.attributes).toEqual({ provider: 'warehouse' });
    // One span, not two: the log line and the traceparent handed on name the OpenTelemetry span.
    expect(line('consumer')).toMatchObject({
      traceId: TRACE_ID,
      spanId: consumer.context.spanId,
      parentId: CALLER_SPAN,
    });
    expect(line('provider-call')).toMatchObject({ spanId: call.context.spanId, parentId: consumer.context.spanId });
    expect(handedOn).toBe(`00-${TRACE_ID}-${call.context.spanId}-01`);
  });

  test("without a carried traceparent, the hop is a child of ADOT's active invocation span: one trace id", async () => {
    let handedOn: string | undefined;

    await inInvocation(() =>
      inSpan('api', undefined, async () => {
        handedOn = activeTraceparent();
      }),
    );

    const api = otel('api');
    expect(api.parent).toMatchObject({ traceId: INVOCATION.traceId, spanId: INVOCATION.spanId });
    expect(api.context.traceId).toBe(INVOCATION.traceId);
    expect(line('api')).toMatchObject({ traceId: INVOCATION.traceId, parentId: INVOCATION.spanId });
    expect(handedOn).toBe(`00-${INVOCATION.traceId}-${api.context.spanId}-01`);
  });

  test("a carried traceparent wins over the invocation's span (the order's trace goes on), linked to it", async () => {
    await inInvocation(() => inSpan('consumer', parseTraceparent(CALLER), async () => undefined));

    const consumer = otel('consumer');
    expect(consumer.context.traceId).toBe(TRACE_ID);
    expect(consumer.parent).toMatchObject({ spanId: CALLER_SPAN });
    expect(consumer.links).toEqual([{ context: INVOCATION }]);
    expect(line('consumer')).toMatchObject({ traceId: TRACE_ID, parentId: CALLER_SPAN });
  });

  test('a hop whose work throws ends its OpenTelemetry span with an error status', async () => {
    await expect(
      inSpan('failing', undefined, async () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');

    expect(otel('failing').status).toEqual({ code: 2 /* SpanStatusCode.ERROR */ });
    expect(otel('failing').parent).toBeUndefined();
    expect(line('failing').attributes).toEqual({ error: 'true' });
  });

  test('a measured hop (the queue wait) is an OpenTelemetry span too, with the ids its child hangs under', async () => {
    const wait = openSpan('queue-wait', parseTraceparent(CALLER), { messageId: 'm-1' }, 1_000);
    wait.end({ failed: false, end: 1_042 });

    await inSpan('consumer', wait.context, async () => undefined);

    expect(otel('queue-wait').context.spanId).toBe(wait.context.spanId);
    expect(otel('consumer').parent).toMatchObject({ spanId: wait.context.spanId });
    expect(line('queue-wait')).toMatchObject({ start: 1_000, end: 1_042, attributes: { messageId: 'm-1' } });
  });
});
