import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { OrderEvent } from '../../lambdas/shop/domain/events';
import { lambdaContext } from './api-events';
import { loadWithMockedSdk, type MockedSdkHandler } from './mocked-sdk';
import { TEST_DEDUPE } from './dedupe';

/**
 * The two SQS consumers with the SDK mocked, the SQS records Lambda hands
 * them, and what they did with those records (failed ids, DLQ sends,
 * visibility changes).
 */
export type ConsumerName = 'fulfilment' | 'loyalty';
export type ConsumerHarness = MockedSdkHandler<(event: SQSEvent, context: Context) => Promise<SQSBatchResponse>> & {
  name: ConsumerName;
};

/** Loads one consumer in its own module registry with `env` set (see loadWithMockedSdk). */
export async function loadConsumer(name: ConsumerName, env: Record<string, string>): Promise<ConsumerHarness> {
  const loaded = await loadWithMockedSdk<ConsumerHarness['handler']>(env, () =>
    name === 'fulfilment'
      ? import('../../lambdas/shop/entry-points/fulfilment-consumer')
      : import('../../lambdas/shop/entry-points/loyalty-consumer'),
  );
  return { ...loaded, name };
}

/** The dedupe horizon the stack derives (21 days): the tests' consumers get it through their environment. */
export const HORIZON_FOR_TESTS = TEST_DEDUPE.horizonSeconds;

const QUEUE_NAME: Record<ConsumerName, string> = { fulfilment: 'fulfilment.fifo', loyalty: 'loyalty' };
let messageSeq = 0;

/**
 * An SQS record as the consumer's event source delivers it; on the FIFO queue
 * with its group (the order, unless given) and a sequence number.
 */
export function sqsMessage(
  h: ConsumerHarness,
  body: OrderEvent | string,
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
      ...(h.name === 'fulfilment'
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
    eventSourceARN: `arn:aws:sqs:us-east-1:123456789012:${QUEUE_NAME[h.name]}`,
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
