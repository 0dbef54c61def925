import type { SQSRecord } from 'aws-lambda';
import { recordSpan } from '../trace/spans';
import { childContext, parseTraceparent, type TraceContext } from '../trace/trace-context';

/**
 * The span a message was sent in: the relay's, from the message's `traceparent` attribute; for a
 * message without one (sent by hand, or by an older relay), the envelope's own `traceparent`; else
 * none (the consumer starts a trace). An unreadable value is ignored, never an error.
 */
export function messageTraceParent(record: SQSRecord): TraceContext | undefined {
  const fromAttribute = parseTraceparent(record.messageAttributes?.traceparent?.stringValue);
  if (fromAttribute !== undefined) return fromAttribute;
  try {
    return parseTraceparent((JSON.parse(record.body) as { traceparent?: unknown } | null)?.traceparent);
  } catch {
    return undefined; // not JSON: the consumer's parse refuses it, with its own words
  }
}

/**
 * Records the message's time in the queue as a `queue-wait` span, from SQS's `SentTimestamp` to
 * `now` (a redelivered message's wait includes its earlier tries and their backoff), and returns it:
 * the consumer's span is its child. Without a readable `SentTimestamp`, nothing is recorded and the
 * consumer's span hangs under the sender's directly.
 */
export function recordQueueWait(record: SQSRecord, now: number): TraceContext | undefined {
  const parent = messageTraceParent(record);
  const sent = Number(record.attributes?.SentTimestamp);
  if (!Number.isFinite(sent) || sent <= 0) return parent;
  const wait = childContext(parent);
  recordSpan(wait, {
    hop: 'queue-wait',
    ...(parent === undefined ? {} : { parentId: parent.spanId }),
    // SQS's clock and this one may differ by a little: a wait is never negative.
    start: Math.min(sent, now),
    end: now,
    attributes: { messageId: record.messageId, receiveCount: record.attributes?.ApproximateReceiveCount ?? '1' },
  });
  return wait;
}
