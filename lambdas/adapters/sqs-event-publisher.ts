import { SendMessageBatchCommand, type SendMessageBatchRequestEntry, type SQSClient } from '@aws-sdk/client-sqs';
import type { OrderEvent } from '../domain/events';
import type { EventPublisher } from '../ports/outbox';
import { logger } from '../shared/observability';

const SQS_BATCH_LIMIT = 10;

/**
 * Publishes outbox events: every event to the FIFO queue (group = orderId so an
 * order's events stay in order, dedup id = eventId), and OrderPlaced also to the
 * standard queue. Every entry of every batch is checked: SendMessageBatch
 * succeeds as a call even when some entries fail.
 */
export class SqsEventPublisher implements EventPublisher {
  private readonly deduplicationId: (event: OrderEvent) => string;

  /**
   * `deduplicationId`: the FIFO dedup id of an event; its id by default, so
   * FIFO drops a second send of it within 5 minutes.
   */
  constructor(
    private readonly client: SQSClient,
    private readonly queues: { fifoQueueUrl: string; standardQueueUrl: string },
    options: { deduplicationId?: (event: OrderEvent) => string } = {},
  ) {
    this.deduplicationId = options.deduplicationId ?? ((event) => event.eventId);
  }

  async publish(events: readonly OrderEvent[]): Promise<Set<string>> {
    const failed = new Set<string>();
    const fifo = events.map((e) => this.entry(e, true));
    const standard = events.filter((e) => e.eventType === 'OrderPlaced').map((e) => this.entry(e, false));
    await Promise.all([
      this.sendAll(this.queues.fifoQueueUrl, fifo, failed),
      this.sendAll(this.queues.standardQueueUrl, standard, failed),
    ]);
    return failed;
  }

  private entry(event: OrderEvent, fifo: boolean): SendMessageBatchRequestEntry & { Id: string } {
    return {
      // Batch entry ids allow only [A-Za-z0-9_-]; the event id goes in an attribute.
      Id: event.eventId.replace(/[^A-Za-z0-9_-]/g, '_'),
      MessageBody: JSON.stringify(event),
      MessageAttributes: {
        eventId: { DataType: 'String', StringValue: event.eventId },
        eventType: { DataType: 'String', StringValue: event.eventType },
      },
      ...(fifo ? { MessageGroupId: event.orderId, MessageDeduplicationId: this.deduplicationId(event) } : {}),
    };
  }

  private async sendAll(
    queueUrl: string,
    entries: (SendMessageBatchRequestEntry & { Id: string })[],
    failed: Set<string>,
  ) {
    const eventIdOf = (entry: SendMessageBatchRequestEntry) => entry.MessageAttributes?.eventId?.StringValue ?? '';
    for (let i = 0; i < entries.length; i += SQS_BATCH_LIMIT) {
      const chunk = entries.slice(i, i + SQS_BATCH_LIMIT);
      try {
        const result = await this.client.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: chunk }));
        const ok = new Set((result.Successful ?? []).map((s) => s.Id));
        for (const entry of chunk) if (!ok.has(entry.Id)) failed.add(eventIdOf(entry));
        if (result.Failed?.length)
          logger.warn('Some batch entries were not published', { queueUrl, failed: result.Failed });
      } catch (error) {
        // The whole call failed: every entry of the chunk is unpublished and will be retried.
        logger.warn('SendMessageBatch failed', { queueUrl, error });
        for (const entry of chunk) failed.add(eventIdOf(entry));
      }
    }
  }
}
