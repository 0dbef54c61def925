import { ChangeMessageVisibilityCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { SQS_MAX_VISIBILITY_SECONDS } from '../consumer/retry-budget';
import type { DeadLetterMessage, MessageControl } from '../consumer/ports';

/**
 * What a consumer may do to the message it is handling, besides succeeding or
 * failing: move it straight to its DLQ (a permanent error), or change how long
 * it stays invisible (backoff for a transient error, heartbeat for a long job).
 */
export class SqsMessageControl implements MessageControl {
  constructor(
    private readonly client: SQSClient,
    private readonly options: { queueUrl: string; deadLetterQueueUrl: string; fifo: boolean },
  ) {}

  async changeVisibility(receiptHandle: string, seconds: number): Promise<void> {
    await this.client.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: this.options.queueUrl,
        ReceiptHandle: receiptHandle,
        VisibilityTimeout: Math.max(0, Math.min(SQS_MAX_VISIBILITY_SECONDS, Math.round(seconds))),
      }),
    );
  }

  /**
   * Sends a copy to the DLQ with why it failed. The caller then acks the
   * original (reports success), so the poison message does not burn retries.
   */
  async sendToDeadLetterQueue(message: DeadLetterMessage): Promise<void> {
    await this.client.send(
      new SendMessageCommand({
        QueueUrl: this.options.deadLetterQueueUrl,
        MessageBody: message.body,
        MessageAttributes: Object.fromEntries(
          Object.entries(message.attributes).map(([k, v]) => [
            k,
            { DataType: 'String', StringValue: v.slice(0, 1024) },
          ]),
        ),
        ...(this.options.fifo
          ? { MessageGroupId: message.groupId ?? message.messageId, MessageDeduplicationId: `dlq-${message.messageId}` }
          : {}),
      }),
    );
  }
}
