import type { SQSRecord } from 'aws-lambda';
import { openSpan } from '../trace/spans';
import { parseTraceparent, type TraceContext } from '../trace/trace-context';

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
 * On a message's first receive, records its time in the queue as a `queue-wait` span, from SQS's
 * `SentTimestamp` to `now`, and returns it: the consumer's span is its child. A redelivered message's
 * `SentTimestamp` is still its first send, so its wait would overlap its earlier tries: none is
 * recorded, and the try's consumer span hangs under the sender's directly (as it does without a
 * readable `SentTimestamp`).
 */
export function recordQueueWait(record: SQSRecord, now: number): TraceContext | undefined {
  const parent = messageTraceParent(record);
  const sent = Number(record.attributes?.SentTimestamp);
  const firstReceive = Number(record.attributes?.ApproximateReceiveCount ?? '1') <= 1;
  if (!firstReceive || !Number.isFinite(sent) || sent <= 0) return parent;
  // SQS's clock and this one may differ by a little: a wait is never negative.
  const wait = openSpan('queue-wait', parent, { messageId: record.messageId }, Math.min(sent, now));
  wait.end({ failed: false, end: now });
  return wait.context;
}
