import type { SQSRecord } from 'aws-lambda';
import type { ConsumerSettings } from '@exactly-once/runtime/consumer/consume-record';
import { parseEnvelope } from '@exactly-once/runtime/envelope';
import { PermanentError } from '@exactly-once/runtime/errors';
import { DEFAULT_SPAN_SAMPLING, keptByHead, spanSamplingFromEnv } from '@exactly-once/runtime/trace/span-sampling';
import {
  inChildSpan,
  inSpan,
  openSpan,
  setSpanSampling,
  setSpanSink,
  type SpanRecord,
} from '@exactly-once/runtime/trace/spans';
import { thingHappened } from './fixtures/probe-events';
import { aMinuteOfWork, consumerSettingsFor } from '../support/consumer-record';

/**
 * Span-log head sampling: a trace's spans are written all or none, decided from its trace id alone,
 * and what a person must find is written whatever the rate: a failed span, a retried or
 * dead-lettered record's spans, a slow span.
 */

/** A trace id whose last 13 hex digits read as `fraction` of the way through their range. */
const traceIdAt = (fraction: number) =>
  `4bf92f3577b34d9a4bf${Math.floor(fraction * 2 ** 52)
    .toString(16)
    .padStart(13, '0')}`;
const parentIn = (traceId: string) => ({ traceId, spanId: '00f067aa0ba902b7', sampled: true });

let spans: SpanRecord[];
const restores: (() => void)[] = [];
beforeEach(() => {
  spans = [];
  restores.push(setSpanSink((span) => spans.push(span)));
});
afterEach(() => {
  while (restores.length > 0) restores.pop()!();
});
const sampleAt = (rate: number, slowMs = 60_000) => restores.push(setSpanSampling({ rate, slowMs }));

describe('consumer records', () => {
  const settings = consumerSettingsFor('loyalty');
  const work = aMinuteOfWork();
  let consumeRecord: typeof import('@exactly-once/runtime/consumer/consume-record').consumeRecord;
  beforeAll(async () => {
    ({ consumeRecord } = await import('@exactly-once/runtime/consumer/consume-record'));
  });
  const record = (traceId: string, receiveCount: number): SQSRecord =>
    ({
      messageId: 'm-1',
      receiptHandle: 'r-1',
      body: JSON.stringify(thingHappened('thing-1', { occurredAt: new Date().toISOString() })),
      attributes: { ApproximateReceiveCount: String(receiveCount), SentTimestamp: String(Date.now()) },
      messageAttributes: {
        traceparent: { dataType: 'String', stringValue: `00-${traceId}-b7ad6b7169203331-01` },
      },
    }) as unknown as SQSRecord;
  const withProviderCall = async () => {
    await inChildSpan('provider-call', async () => undefined);
    return 'applied' as const;
  };

  test('at rate 0.5, 40 traces through api, relay and consumer: each trace written whole or not at all, about half written', async () => {
    sampleAt(0.5);
    const traces = Array.from({ length: 40 }, (_, i) => traceIdAt((i + 0.5) / 40));

    for (const traceId of traces) {
      // Three functions, three hops of one trace: each decides on its own.
      await inSpan('api', parentIn(traceId), async () => undefined);
      openSpan('relay', parentIn(traceId)).end({ failed: false });
      await consumeRecord(record(traceId, 1), settings, parseEnvelope, withProviderCall, work);
    }

    const hopsOf = (traceId: string) => spans.filter((s) => s.traceId === traceId).map((s) => s.hop);
    const written = traces.filter((t) => hopsOf(t).length > 0);
    for (const traceId of written)
      expect(hopsOf(traceId).sort()).toEqual(['api', 'consumer', 'provider-call', 'queue-wait', 'relay']);
    expect(written).toHaveLength(20);
  });

  test("at rate 0 a retried record's try (receive count 3) is written whole, its provider call included; its first try is not", async () => {
    sampleAt(0);
    const traceId = traceIdAt(0.9);

    await consumeRecord(record(traceId, 1), settings, parseEnvelope, withProviderCall, work);
    await consumeRecord(record(traceId, 3), settings, parseEnvelope, withProviderCall, work);

    expect(spans.map((s) => [s.hop, s.attributes?.receiveCount])).toEqual([
      ['provider-call', undefined],
      ['consumer', '3'],
    ]);
  });

  test('at rate 0 a dead-lettered record (permanent error, not thrown) has its consumer span written', async () => {
    sampleAt(0);

    const outcome = await consumeRecord(
      record(traceIdAt(0.9), 1),
      settings,
      parseEnvelope,
      async () => {
        throw new PermanentError('SchemaViolation', 'refused');
      },
      work,
    );

    expect(outcome).toBe('dead-lettered');
    expect(spans.map((s) => s.hop)).toEqual(['consumer']);
  });
  test('at rate 0 a FIFO record whose try budget is spent (dead-lettered, not thrown) has its consumer span written', async () => {
    sampleAt(0);
    const fifo: ConsumerSettings = {
      ...settings,
      tryLimit: { maxAttempts: 3, counter: { recordFailedTry: async () => 3 } },
    };

    const outcome = await consumeRecord(
      record(traceIdAt(0.9), 1),
      fifo,
      parseEnvelope,
      async () => {
        throw new Error('provider down');
      },
      work,
    );

    expect(outcome).toBe('dead-lettered');
    expect(spans.map((s) => s.hop)).toEqual(['consumer']);
  });
});

test('at rate 0 a span that failed is written, with its error mark; one that did not fail is not', async () => {
  sampleAt(0);
  const traceId = traceIdAt(0.9);

  await inSpan('api', parentIn(traceId), async () => undefined);
  await expect(
    inSpan('api', parentIn(traceId), async () => {
      throw new Error('boom');
    }),
  ).rejects.toThrow('boom');

  expect(spans.map((s) => [s.hop, s.attributes?.error])).toEqual([['api', 'true']]);
});

test('at rate 0 a span at least slowMs long is written; a shorter one is not', () => {
  sampleAt(0, 1000);
  const traceId = traceIdAt(0.9);

  openSpan('relay', parentIn(traceId), { eventId: 'fast' }, 10_000).end({ failed: false, end: 10_999 });
  openSpan('relay', parentIn(traceId), { eventId: 'slow' }, 10_000).end({ failed: false, end: 11_000 });

  expect(spans.map((s) => s.attributes?.eventId)).toEqual(['slow']);
});

test('the head decision reads the trace id only: rate 1 keeps every trace, 0 none, and 0.25 keeps ids below a quarter', () => {
  expect(keptByHead(traceIdAt(0.99), 1)).toBe(true);
  expect(keptByHead(traceIdAt(0), 0)).toBe(false);
  expect([0.1, 0.24, 0.26, 0.9].map((f) => keptByHead(traceIdAt(f), 0.25))).toEqual([true, true, false, false]);
});

test('the environment sets the sampling; a missing or unreadable value keeps every trace', () => {
  expect(spanSamplingFromEnv({ SPAN_SAMPLE_RATE: '0.1', SLOW_SPAN_MS: '250' })).toEqual({ rate: 0.1, slowMs: 250 });
  expect(spanSamplingFromEnv({})).toEqual(DEFAULT_SPAN_SAMPLING);
  expect(spanSamplingFromEnv({ SPAN_SAMPLE_RATE: 'often', SLOW_SPAN_MS: '-1' })).toEqual(DEFAULT_SPAN_SAMPLING);
  expect(spanSamplingFromEnv({ SPAN_SAMPLE_RATE: '1.5' })).toEqual(DEFAULT_SPAN_SAMPLING);
});
