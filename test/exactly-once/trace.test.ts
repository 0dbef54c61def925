import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEvent, SQSRecord } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { HttpProvider } from '@exactly-once/runtime/aws/http-provider';
import { outboxPut } from '@exactly-once/runtime/aws/outbox-table';
import { SqsEventPublisher } from '@exactly-once/runtime/aws/sqs-event-publisher';
import { envelopeSchema, parseEnvelope, type EventEnvelope } from '@exactly-once/runtime/envelope';
import { PermanentError } from '@exactly-once/runtime/errors';
import { eventFingerprint } from '@exactly-once/runtime/inbox/fingerprint';
import { inChildSpan, inSpan, setSpanSink, type SpanRecord } from '@exactly-once/runtime/trace/spans';
import {
  childContext,
  formatTraceparent,
  parseTraceparent,
  type TraceContext,
} from '@exactly-once/runtime/trace/trace-context';
import { aMinuteOfWork, consumerSettingsFor } from '../support/consumer-record';

/**
 * The W3C trace context of one order, hop by hop: the pure parse / format / child functions, the
 * span recorder, then each hop the mechanism owns (the API request, the outbox write, the relay's
 * publication, the queue wait and the consumer, the provider call), each asserting the same trace id
 * and a new span whose parent is the hop before.
 */

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const CALLER = `00-${TRACE_ID}-${CALLER_SPAN}-01`;

let spans: SpanRecord[];
let restoreSink: () => void;
beforeEach(() => {
  spans = [];
  restoreSink = setSpanSink((span) => spans.push(span));
});
afterEach(() => {
  restoreSink();
  jest.restoreAllMocks();
});

const hop = (name: string) => {
  const found = spans.filter((s) => s.hop === name);
  expect(found).toHaveLength(1);
  return found[0];
};

describe('traceparent: parse, format, child', () => {
  test('a valid version-00 header is read; formatting it gives it back', () => {
    const context = parseTraceparent(CALLER);

    expect(context).toEqual({ traceId: TRACE_ID, spanId: CALLER_SPAN, sampled: true });
    expect(formatTraceparent(context!)).toBe(CALLER);
    expect(parseTraceparent(`00-${TRACE_ID}-${CALLER_SPAN}-00`)?.sampled).toBe(false);
    expect(parseTraceparent(`  ${CALLER} `)?.traceId).toBe(TRACE_ID); // optional whitespace around the value
  });

  test.each([
    ['absent', undefined],
    ['not a string', 42],
    ['empty', ''],
    ['too short', `00-${TRACE_ID}-${CALLER_SPAN}-1`],
    ['version 00 with more after it', `${CALLER}-extra`],
    ['version ff', `ff-${TRACE_ID}-${CALLER_SPAN}-01`],
    ['upper-case hex', `00-${TRACE_ID.toUpperCase()}-${CALLER_SPAN}-01`],
    ['all-zero trace id', `00-${'0'.repeat(32)}-${CALLER_SPAN}-01`],
    ['all-zero parent id', `00-${TRACE_ID}-${'0'.repeat(16)}-01`],
    ['wrong separators', `00_${TRACE_ID}_${CALLER_SPAN}_01`],
    ['not hex', `00-${'g'.repeat(32)}-${CALLER_SPAN}-01`],
    ['a later version without a dash after the fields', `01-${TRACE_ID}-${CALLER_SPAN}-01x`],
  ])('%s is not a trace context (a new trace starts instead)', (_what, value) => {
    expect(parseTraceparent(value)).toBeUndefined();
  });

  test('a later version is read by its first four fields', () => {
    expect(parseTraceparent(`01-${TRACE_ID}-${CALLER_SPAN}-01-what-comes-later`)).toEqual({
      traceId: TRACE_ID,
      spanId: CALLER_SPAN,
      sampled: true,
    });
  });

  test('a child keeps the trace and the sampled flag, with a new span id; no parent starts a sampled trace', () => {
    const parent = parseTraceparent(`00-${TRACE_ID}-${CALLER_SPAN}-00`)!;

    const child = childContext(parent);
    const root = childContext(undefined);

    expect(child.traceId).toBe(TRACE_ID);
    expect(child.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(child.spanId).not.toBe(CALLER_SPAN);
    expect(child.sampled).toBe(false);
    expect(root.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(root.traceId).not.toBe(TRACE_ID);
    expect(root.sampled).toBe(true);
    expect(parseTraceparent(formatTraceparent(root))).toEqual(root);
  });

  test('an all-zero draw is drawn again: no id is ever all zero', () => {
    const draws = ['0'.repeat(32), 'ab'.repeat(16), '0'.repeat(16), 'cd'.repeat(8)];
    const context = childContext(undefined, () => draws.shift()!);

    expect(context).toEqual({ traceId: 'ab'.repeat(16), spanId: 'cd'.repeat(8), sampled: true });
  });
});

describe('spans', () => {
  test('a span records its hop, ids, parent and times; nested code sees it as the active span', async () => {
    const parent = parseTraceparent(CALLER);
    let inner: TraceContext | undefined;

    await inSpan('outer', parent, () => inChildSpan('inner', async (span) => void (inner = span)), { a: '1' });

    const outer = hop('outer');
    expect(outer).toMatchObject({ traceId: TRACE_ID, parentId: CALLER_SPAN, attributes: { a: '1' } });
    expect(hop('inner')).toMatchObject({ traceId: TRACE_ID, spanId: inner!.spanId, parentId: outer.spanId });
    expect(outer.end).toBeGreaterThanOrEqual(outer.start);
  });

  test('a span whose work throws is recorded with error, and the error goes on', async () => {
    await expect(
      inSpan('failing', undefined, async () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');

    expect(hop('failing').attributes).toEqual({ error: 'true' });
    expect(hop('failing').parentId).toBeUndefined();
  });

  test('an unsampled trace records nothing; a sink that throws never fails the work', async () => {
    await inSpan('unsampled', parseTraceparent(`00-${TRACE_ID}-${CALLER_SPAN}-00`), async () => undefined);
    expect(spans).toEqual([]);

    setSpanSink(() => {
      throw new Error('sink down');
    });
    await expect(inSpan('recorded', undefined, async () => 'done')).resolves.toBe('done');
  });
});

// ---------------------------------------------------------------- the hops

function apiRequest(headers: Record<string, string[]>): APIGatewayProxyEvent {
  return { headers: {}, multiValueHeaders: headers } as unknown as APIGatewayProxyEvent;
}

describe('API hop', () => {
  let inRequestSpan: typeof import('@exactly-once/runtime/api/request-trace').inRequestSpan;
  beforeAll(async () => {
    ({ inRequestSpan } = await import('@exactly-once/runtime/api/request-trace'));
  });

  test("the caller's valid traceparent is the api span's parent", async () => {
    await inRequestSpan(apiRequest({ traceparent: [CALLER] }), 'POST /orders', async () => undefined);

    expect(hop('api')).toMatchObject({
      traceId: TRACE_ID,
      parentId: CALLER_SPAN,
      attributes: { route: 'POST /orders' },
    });
  });

  test.each([
    ['an invalid', [`00-${TRACE_ID.toUpperCase()}-${CALLER_SPAN}-01`]],
    ['a repeated', [CALLER, CALLER]],
    ['an absent', undefined],
  ])('%s traceparent is ignored: the request runs in a new trace', async (_what, values) => {
    const result = await inRequestSpan(
      apiRequest(values === undefined ? {} : { traceparent: values }),
      'POST /orders',
      async () => 'answered',
    );

    expect(result).toBe('answered');
    expect(hop('api').traceId).not.toBe(TRACE_ID);
    expect(hop('api').parentId).toBeUndefined();
  });
});

const EVENT: EventEnvelope = {
  eventId: 'ord-1.placed',
  type: 'OrderPlaced',
  entityId: 'ord-1',
  version: 1,
  occurredAt: new Date().toISOString(),
  payload: { total: 1 },
};

describe('outbox hop', () => {
  test('the outbox item carries the active span (the outbox write) as its traceparent', async () => {
    let item: { event: EventEnvelope } | undefined;
    await inSpan('outbox-write', parseTraceparent(CALLER), async () => {
      item = outboxPut('orders', EVENT, 'ORDER#').Put.Item as { event: EventEnvelope };
    });

    expect(item!.event).toEqual({
      ...EVENT,
      traceparent: formatTraceparent({ ...hop('outbox-write'), sampled: true }),
    });
  });

  test("an event's own traceparent is kept; outside any span an event is stored as it is", async () => {
    const own = { ...EVENT, traceparent: CALLER };
    await inSpan('outbox-write', undefined, async () => {
      expect(outboxPut('orders', own, 'ORDER#').Put.Item.event).toEqual(own);
    });
    expect(outboxPut('orders', EVENT, 'ORDER#').Put.Item.event).toEqual(EVENT);
  });

  test('the envelope takes a traceparent, drops one that is not a string, and leaves the fingerprint alone', () => {
    expect(envelopeSchema.parse({ ...EVENT, traceparent: CALLER }).traceparent).toBe(CALLER);
    expect(envelopeSchema.parse({ ...EVENT, traceparent: { not: 'a string' } }).traceparent).toBeUndefined();
    expect(envelopeSchema.parse(EVENT).traceparent).toBeUndefined();
    expect(eventFingerprint({ ...EVENT, traceparent: CALLER })).toBe(eventFingerprint(EVENT));
  });
});

describe('relay hop', () => {
  const sqs = mockClient(SQSClient);
  const client = new SQSClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
  const route = { consumer: 'loyalty', queueUrl: 'https://sqs.local/q', fifo: false, eventTypes: ['OrderPlaced'] };

  beforeEach(() => {
    sqs.reset();
    sqs.on(SendMessageBatchCommand).callsFake((input: { Entries: { Id: string }[] }) => ({
      Successful: input.Entries.map((e) => ({ Id: e.Id })),
    }));
  });

  const sentAttribute = () => {
    const entry = sqs.commandCalls(SendMessageBatchCommand)[0].args[0].input.Entries![0];
    return { traceparent: entry.MessageAttributes?.traceparent?.StringValue, body: JSON.parse(entry.MessageBody!) };
  };

  test("the message's traceparent attribute is the relay span, a child of the event's; the body is the stored event", async () => {
    const stored = { ...EVENT, traceparent: CALLER };

    await new SqsEventPublisher(client, [route]).publish([stored]);

    const relay = hop('relay');
    expect(relay).toMatchObject({ traceId: TRACE_ID, parentId: CALLER_SPAN, attributes: { eventId: EVENT.eventId } });
    expect(sentAttribute()).toEqual({ traceparent: `00-${TRACE_ID}-${relay.spanId}-01`, body: stored });
  });

  test.each([
    ['no traceparent', EVENT],
    ['an unreadable one', { ...EVENT, traceparent: 'garbage' }],
  ])('an event with %s is published in a new trace', async (_what, stored) => {
    await new SqsEventPublisher(client, [route]).publish([stored]);

    const relay = hop('relay');
    expect(relay.parentId).toBeUndefined();
    expect(sentAttribute().traceparent).toBe(`00-${relay.traceId}-${relay.spanId}-01`);
  });
});

describe('consumer hop', () => {
  let consumeRecord: typeof import('@exactly-once/runtime/consumer/consume-record').consumeRecord;
  beforeAll(async () => {
    ({ consumeRecord } = await import('@exactly-once/runtime/consumer/consume-record'));
  });

  const RELAY_SPAN = 'b7ad6b7169203331';
  const SENT_AT = Date.now() - 1_500;
  const settings = consumerSettingsFor('loyalty');
  const work = aMinuteOfWork();

  function record(options: { attribute?: string; body?: EventEnvelope; receiveCount?: number }): SQSRecord {
    return {
      messageId: 'm-1',
      receiptHandle: 'r-1',
      body: JSON.stringify(options.body ?? EVENT),
      attributes: { ApproximateReceiveCount: String(options.receiveCount ?? 1), SentTimestamp: String(SENT_AT) },
      messageAttributes:
        options.attribute === undefined ? {} : { traceparent: { dataType: 'String', stringValue: options.attribute } },
    } as unknown as SQSRecord;
  }

  test('the queue wait (from SentTimestamp) is a child of the relay span, the consumer a child of the wait, its calls children of the consumer', async () => {
    let seenInApply: string | undefined;
    await consumeRecord(
      record({ attribute: `00-${TRACE_ID}-${RELAY_SPAN}-01` }),
      settings,
      parseEnvelope,
      async () => {
        await inChildSpan('provider-call', async (span) => void (seenInApply = span.spanId));
        return 'applied';
      },
      work,
    );

    const wait = hop('queue-wait');
    const consumer = hop('consumer');
    expect(wait).toMatchObject({ traceId: TRACE_ID, parentId: RELAY_SPAN, start: SENT_AT });
    expect(wait.attributes).toEqual({ messageId: 'm-1' });
    expect(consumer).toMatchObject({
      traceId: TRACE_ID,
      parentId: wait.spanId,
      attributes: { consumer: 'loyalty', messageId: 'm-1', receiveCount: '1' },
    });
    expect(consumer.start).toBeGreaterThanOrEqual(wait.end);
    expect(hop('provider-call')).toMatchObject({ traceId: TRACE_ID, spanId: seenInApply, parentId: consumer.spanId });
  });

  test('a redelivery records no queue wait (its SentTimestamp is the first send): its try hangs under the relay span', async () => {
    await consumeRecord(
      record({ attribute: `00-${TRACE_ID}-${RELAY_SPAN}-01`, receiveCount: 3 }),
      settings,
      parseEnvelope,
      async () => 'applied',
      work,
    );

    expect(spans.map((s) => s.hop)).toEqual(['consumer']);
    expect(hop('consumer')).toMatchObject({ parentId: RELAY_SPAN, attributes: { receiveCount: '3' } });
  });

  test("without the attribute (or with an unreadable one), the envelope's traceparent is the parent", async () => {
    for (const attribute of [undefined, 'garbage']) {
      spans = [];
      await consumeRecord(
        record({ attribute, body: { ...EVENT, traceparent: CALLER } }),
        settings,
        parseEnvelope,
        async () => 'applied',
        work,
      );
      expect(hop('queue-wait')).toMatchObject({ traceId: TRACE_ID, parentId: CALLER_SPAN });
    }
  });

  test('a record dead-lettered is still traced', async () => {
    const outcome = await consumeRecord(
      record({ attribute: `00-${TRACE_ID}-${RELAY_SPAN}-01` }),
      settings,
      parseEnvelope,
      async () => {
        throw new PermanentError('SchemaViolation', 'refused');
      },
      work,
    );

    expect(outcome).toBe('dead-lettered');
    expect(hop('consumer').traceId).toBe(TRACE_ID);
  });
});

describe('provider hop', () => {
  let server: Server;
  let seen: IncomingHttpHeaders[];
  let endpoint: string;
  beforeAll(async () => {
    server = createServer((request, response) => {
      seen.push(request.headers);
      request.resume();
      response.writeHead(201, { Connection: 'close' }).end('{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    seen = [];
  });

  test("the call sends traceparent naming its provider-call span, a child of the consumer's", async () => {
    const provider = new HttpProvider({ name: 'mail', endpoint, apiKey: () => 'k' });
    const consumer = parseTraceparent(`00-${TRACE_ID}-${CALLER_SPAN}-01`);

    await inSpan('consumer', consumer, () => provider.send('loyalty:ord-1.placed', { a: 1 }));

    const call = hop('provider-call');
    expect(call).toMatchObject({ traceId: TRACE_ID, parentId: hop('consumer').spanId });
    expect(call.attributes).toEqual({ provider: 'mail', idempotencyKey: 'loyalty:ord-1.placed' });
    expect(seen[0].traceparent).toBe(`00-${TRACE_ID}-${call.spanId}-01`);
  });

  test('a call outside any span still sends a valid traceparent, of a new trace', async () => {
    await new HttpProvider({ name: 'mail', endpoint, apiKey: () => 'k' }).send('loyalty:ord-2.placed', {});

    expect(parseTraceparent(seen[0].traceparent)).toEqual(
      expect.objectContaining({ spanId: hop('provider-call').spanId }),
    );
  });
});
