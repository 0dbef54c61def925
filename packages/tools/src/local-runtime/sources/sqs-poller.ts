import { DeleteMessageBatchCommand, ReceiveMessageCommand, type Message, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import type { FunctionHost } from '../host/function-host';
import type { SqsSourceDefinition } from '../template/event-sources';
import { matchesAnyFilter } from './event-filter';
import { parseBatchItemFailures } from './batch-response';
import { sleep } from './sleep';

export interface LocalQueue {
  url: string;
  arn: string;
  name: string;
  fifo: boolean;
}

/**
 * An SQS event source mapping with Lambda's semantics:
 * - long polls, gathers up to BatchSize messages or until the batching window closes;
 * - at most ScalingConfig.MaximumConcurrency (else the function's limit) batches in flight;
 * - success deletes the batch; an error, timeout or crash deletes nothing, so
 *   the messages come back after the queue's visibility timeout and the
 *   queue's own redrive policy (receive count) moves them to its DLQ;
 * - ReportBatchItemFailures: deletes all but the reported ids, and treats an
 *   invalid response as a failure of the whole batch;
 * - FIFO: order within a message group comes from SQS itself, which hands out
 *   a group's next messages only once the previous ones are deleted or visible again;
 * - filtered-out messages are deleted without invoking the function.
 */
export class SqsPoller {
  private readonly abort = new AbortController();
  private loops: Promise<void>[] = [];

  constructor(
    private readonly source: SqsSourceDefinition,
    private readonly queue: LocalQueue,
    private readonly host: FunctionHost,
    private readonly sqs: SQSClient,
    private readonly region: string,
    private readonly log: (line: string) => void,
  ) {}

  /** Concurrent pollers, each with one batch in flight at a time. */
  get concurrency(): number {
    return Math.max(1, Math.min(this.source.maximumConcurrency ?? Infinity, this.host.limit));
  }

  start(): void {
    if (!this.source.enabled) return;
    this.loops = Array.from({ length: this.concurrency }, () => this.loop());
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await Promise.allSettled(this.loops);
  }

  private async loop(): Promise<void> {
    while (!this.abort.signal.aborted) {
      try {
        const messages = await this.collectBatch();
        if (messages.length > 0) await this.deliver(messages);
      } catch (error) {
        if (this.abort.signal.aborted) return;
        this.log(`polling ${this.queue.name} failed: ${(error as Error).message}`);
        await sleep(1_000, this.abort.signal);
      }
    }
  }

  private async collectBatch(): Promise<Message[]> {
    const max = this.source.batchSize;
    const batch = await this.receive(Math.min(10, max), 20);
    if (batch.length === 0 || this.source.batchingWindowSeconds <= 0) return batch;
    const deadline = Date.now() + this.source.batchingWindowSeconds * 1000;
    while (batch.length < max && !this.abort.signal.aborted) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) break;
      const more = await this.receive(Math.min(10, max - batch.length), Math.min(20, Math.floor(remaining / 1000)));
      batch.push(...more);
      if (more.length === 0 && remaining < 1000) await sleep(Math.min(remaining, 100), this.abort.signal);
    }
    return batch;
  }

  private async receive(maxMessages: number, waitSeconds: number): Promise<Message[]> {
    const output = await this.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: this.queue.url,
        MaxNumberOfMessages: maxMessages,
        WaitTimeSeconds: waitSeconds,
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
      { abortSignal: this.abort.signal },
    );
    return output.Messages ?? [];
  }

  private async deliver(messages: Message[]): Promise<void> {
    const records = messages.map((m) => this.toRecord(m));
    const wanted = records.filter((r) => matchesAnyFilter(this.source.filters, withParsedBody(r)));
    const filteredOut = records.filter((r) => !wanted.includes(r));
    if (filteredOut.length > 0) await this.delete(filteredOut);
    if (wanted.length === 0) return;

    const result = await this.host.invoke({ Records: wanted }, 'wait');
    if (!result.ok) return; // Nothing deleted: every message comes back after its visibility timeout.
    let failed = new Set<string>();
    if (this.source.reportBatchItemFailures) {
      const failures = parseBatchItemFailures(result.payload, new Set(wanted.map((r) => r.messageId)));
      if (failures === 'invalid') {
        this.log(`invalid batch item failures response from ${this.host.fn.displayName}: the whole batch failed`);
        return;
      }
      failed = new Set(failures);
    }
    await this.delete(wanted.filter((r) => !failed.has(r.messageId)));
  }

  private async delete(records: SQSRecord[]): Promise<void> {
    for (let i = 0; i < records.length; i += 10) {
      const chunk = records.slice(i, i + 10);
      await this.sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: this.queue.url,
          Entries: chunk.map((r, n) => ({ Id: String(n), ReceiptHandle: r.receiptHandle })),
        }),
      );
    }
  }

  private toRecord(m: Message): SQSRecord {
    const messageAttributes: SQSRecord['messageAttributes'] = {};
    for (const [name, value] of Object.entries(m.MessageAttributes ?? {})) {
      messageAttributes[name] = {
        stringValue: value.StringValue,
        binaryValue: value.BinaryValue === undefined ? undefined : Buffer.from(value.BinaryValue).toString('base64'),
        stringListValues: value.StringListValues ?? [],
        binaryListValues: [],
        dataType: value.DataType ?? 'String',
      };
    }
    return {
      messageId: m.MessageId!,
      receiptHandle: m.ReceiptHandle!,
      body: m.Body ?? '',
      attributes: (m.Attributes ?? {}) as unknown as SQSRecord['attributes'],
      messageAttributes,
      md5OfBody: m.MD5OfBody ?? '',
      ...(m.MD5OfMessageAttributes ? { md5OfMessageAttributes: m.MD5OfMessageAttributes } : {}),
      eventSource: 'aws:sqs',
      eventSourceARN: this.queue.arn,
      awsRegion: this.region,
    };
  }
}

/** Filters see a JSON body as an object (Lambda parses it for matching). */
function withParsedBody(record: SQSRecord): unknown {
  try {
    return { ...record, body: JSON.parse(record.body) as unknown };
  } catch {
    return record;
  }
}
