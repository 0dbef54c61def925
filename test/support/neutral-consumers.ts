import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { lambdaContext } from '@exactly-once/runtime/testing';
import type { EventEnvelope } from '@exactly-once/runtime';
import { PROBE_FIFO_SPEC, PROBE_SPEC } from '../exactly-once/fixtures/probe-spec';
import { loadWithMockedSdk, type MockedSdkHandler } from './mocked-sdk';
import { TEST_DEDUPE } from './dedupe';

/**
 * A queue consumer's handler with the SDK mocked, the SQS records Lambda hands it, and what it did with
 * them (failed ids, DLQ sends, visibility changes). Nothing here knows an application: the consumer is
 * named by its spec, and FIFO records get a group and a sequence number.
 */
export type ConsumerHarness<Name extends string = string> = MockedSdkHandler<
  (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>
> & { name: Name; fifo: boolean };

/** The neutral fixture's two consumers: `probe` (standard) and `probe-fifo` (FIFO). */
export type ProbeConsumerName = 'probe' | 'probe-fifo';
export type ProbeHarness = ConsumerHarness<ProbeConsumerName>;

/** Loads one probe consumer in its own module registry with `env` set (see loadWithMockedSdk). */
export async function loadProbeConsumer(name: ProbeConsumerName, env: Record<string, string>): Promise<ProbeHarness> {
  const loaded = await loadWithMockedSdk<ProbeHarness['handler']>(env, () =>
    name === 'probe-fifo'
      ? import('../exactly-once/fixtures/handlers/probe-fifo-consumer')
      : import('../exactly-once/fixtures/handlers/probe-consumer'),
  );
  return { ...loaded, name, fifo: (name === 'probe-fifo' ? PROBE_FIFO_SPEC : PROBE_SPEC).fifo };
}

/** The dedupe horizon the stack derives (21 days): the tests' consumers get it through their environment. */
export const HORIZON_FOR_TESTS = TEST_DEDUPE.horizonSeconds;

let messageSeq = 0;

/**
 * An SQS record as the consumer's event source delivers it; on a FIFO queue with its group (the
 * event's entity, unless given), a deduplication id and a sequence number.
 */
export function sqsMessage(
  h: { name: string; fifo: boolean },
  body: EventEnvelope | string,
  options: { messageId?: string; receiveCount?: number; groupId?: string } = {},
): SQSRecord {
  messageSeq += 1;
  const messageId = options.messageId ?? `msg-${messageSeq}`;
  const event = typeof body === 'string' ? undefined : body;
  return {
    messageId,
    receiptHandle: `receipt-${messageId}-${messageSeq}`,
    body: typeof body === 'string' ? body : JSON.stringify(body),
    attributes: {
      ApproximateReceiveCount: String(options.receiveCount ?? 1),
      SentTimestamp: '1893553445000',
      SenderId: 'AIDAEXAMPLE',
      ApproximateFirstReceiveTimestamp: '1893553445000',
      ...(h.fifo
        ? {
            MessageGroupId: options.groupId ?? event?.entityId ?? 'group-unknown',
            MessageDeduplicationId: event?.eventId ?? `dedup-${messageId}`,
            SequenceNumber: String(10_000 + messageSeq),
          }
        : {}),
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: `arn:aws:sqs:us-east-1:123456789012:${h.fifo ? `${h.name}.fifo` : h.name}`,
    awsRegion: 'us-east-1',
  };
}

export function deliver(h: ConsumerHarness, ...records: SQSRecord[]): Promise<SQSBatchResponse> {
  return h.handler({ Records: records }, lambdaContext());
}

export const failedIds = (response: SQSBatchResponse) => response.batchItemFailures.map((f) => f.itemIdentifier);
export const deadLettered = (h: ConsumerHarness) =>
  h.sqs.commandCalls(h.sqsSdk.SendMessageCommand).map((c) => c.args[0].input);
export const visibilityChanges = (h: ConsumerHarness) =>
  h.sqs.commandCalls(h.sqsSdk.ChangeMessageVisibilityCommand).map((c) => c.args[0].input);
