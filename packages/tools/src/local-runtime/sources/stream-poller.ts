import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { randomUUID } from 'node:crypto';
import type { FunctionHost } from '../host/function-host';
import type { StreamSourceDefinition } from '../template/event-sources';
import { parseBatchItemFailures } from './batch-response';
import { StreamsError, type DynamoDbStreamsClient, type Shard, type StreamRecord } from './dynamodb-streams-client';
import { matchesAnyFilter } from './event-filter';
import type { LocalQueue } from './sqs-poller';
import { sleep } from './sleep';

/** A record read from the shard, with when the poller first saw it. */
interface Pending {
  record: StreamRecord;
  /**
   * DynamoDB Local rounds ApproximateCreationDateTime to the minute (docs/pitfalls.md),
   * so record age is measured from when the poller read the record; locally
   * that is milliseconds after the write.
   */
  seenAt: number;
}

export type FailureCondition = 'RetryAttemptsExhausted' | 'RecordAgeExceeded';

/** Lambda polls each shard about four times a second. */
export const POLL_INTERVAL_MS = 250;

/**
 * A DynamoDB Streams event source mapping with Lambda's semantics, one shard
 * at a time, in order:
 * - starting position TRIM_HORIZON or LATEST; filters drop records before batching;
 * - batches of BatchSize, waiting up to the batching window to fill one;
 * - on error: bisect (halves do not count as retries) when enabled, else retry
 *   the same batch until MaximumRetryAttempts, or until a record is older than
 *   MaximumRecordAgeInSeconds; then send Lambda's failure record to the
 *   on-failure destination and move on;
 * - ReportBatchItemFailures: checkpoint at the lowest failed sequence number
 *   and retry from there; an invalid response fails the whole batch.
 */
export class StreamPoller {
  private readonly abort = new AbortController();
  private running?: Promise<void>;
  private shardId = '';
  /** The last sequence number read, to resume after an iterator DynamoDB Local no longer accepts. */
  private lastSequenceNumber?: string;

  constructor(
    private readonly source: StreamSourceDefinition,
    private readonly streamArn: string,
    private readonly host: FunctionHost,
    private readonly streams: DynamoDbStreamsClient,
    private readonly sqs: SQSClient,
    private readonly destination: { queue?: LocalQueue; description?: string },
    private readonly region: string,
    private readonly log: (line: string) => void,
  ) {}

  /** Resolves once the shard iterator is taken, so writes after start are seen even with LATEST. */
  async start(): Promise<void> {
    if (!this.source.enabled) return;
    const first = await this.firstIterator();
    this.running = this.loop(first).catch((error: Error) => {
      if (!this.abort.signal.aborted) this.log(`stream polling stopped: ${error.message}`);
    });
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.running;
  }

  private async firstIterator(): Promise<string | undefined> {
    const shards = await this.streams.describeStream(this.streamArn);
    const ids = new Set(shards.map((s) => s.ShardId));
    // TRIM_HORIZON: the oldest shard; LATEST: the open one.
    const shard =
      this.source.startingPosition === 'TRIM_HORIZON'
        ? shards.find((s) => s.ParentShardId === undefined || !ids.has(s.ParentShardId))
        : shards.find((s) => s.SequenceNumberRange?.EndingSequenceNumber === undefined);
    if (shard === undefined) return undefined;
    this.shardId = shard.ShardId;
    return this.streams.shardIterator(this.streamArn, shard.ShardId, this.source.startingPosition);
  }

  private async loop(firstIterator: string | undefined): Promise<void> {
    let iterator = firstIterator;
    const buffer: Pending[] = [];
    while (!this.abort.signal.aborted) {
      let read = 0;
      if (iterator !== undefined) {
        let page: { records: StreamRecord[]; next?: string };
        try {
          page = await this.streams.getRecords(iterator, 1000);
        } catch (error) {
          iterator = await this.recover(error);
          continue;
        }
        const { records, next } = page;
        read = records.length;
        if (read > 0) this.lastSequenceNumber = records[read - 1].dynamodb.SequenceNumber;
        const now = Date.now();
        for (const record of records.map((r) => this.toLambdaRecord(r))) {
          // Filtered-out records are dropped as processed, as Lambda does.
          if (matchesAnyFilter(this.source.filters, record)) buffer.push({ record, seenAt: now });
        }
        iterator = next ?? (await this.childShardIterator());
      } else {
        iterator = await this.childShardIterator();
      }
      const windowOpen =
        buffer.length > 0 &&
        buffer.length < this.source.batchSize &&
        Date.now() - buffer[0].seenAt < this.source.batchingWindowSeconds * 1000;
      if (buffer.length === 0 || windowOpen) {
        if (read === 0) await sleep(POLL_INTERVAL_MS, this.abort.signal);
        continue;
      }
      await this.process(buffer.splice(0, this.source.batchSize));
    }
  }

  /**
   * A rejected iterator (expired, or "trimmed" as DynamoDB Local sometimes
   * says of a fresh shard) is replaced by one right after the last record
   * read, so nothing is skipped or read twice. Other errors are retried.
   */
  private async recover(error: unknown): Promise<string | undefined> {
    if (this.abort.signal.aborted) return undefined;
    const type = error instanceof StreamsError ? error.type : '';
    if (type !== 'TrimmedDataAccessException' && type !== 'ExpiredIteratorException') {
      this.log(`${(error as Error).message}; retrying`);
    }
    await sleep(POLL_INTERVAL_MS, this.abort.signal);
    return this.lastSequenceNumber === undefined
      ? this.streams.shardIterator(this.streamArn, this.shardId, 'TRIM_HORIZON')
      : this.streams.shardIterator(this.streamArn, this.shardId, 'AFTER_SEQUENCE_NUMBER', this.lastSequenceNumber);
  }

  /** After a shard closes, continue with its child (DynamoDB rolls shards over). */
  private async childShardIterator(): Promise<string | undefined> {
    const shards: Shard[] = await this.streams.describeStream(this.streamArn);
    const child = shards.find((s) => s.ParentShardId === this.shardId);
    if (child === undefined) return undefined;
    this.shardId = child.ShardId;
    return this.streams.shardIterator(this.streamArn, child.ShardId, 'TRIM_HORIZON');
  }

  /** Delivers one batch until it succeeds or is discarded; later records wait, keeping shard order. */
  private async process(batch: Pending[]): Promise<void> {
    const { maximumRetryAttempts, maximumRecordAgeSeconds } = this.source;
    let current = batch;
    let invocations = 0;
    let retries = 0;
    while (current.length > 0 && !this.abort.signal.aborted) {
      const expired =
        maximumRecordAgeSeconds < 0
          ? 0
          : countWhile(current, (p) => Date.now() - p.seenAt > maximumRecordAgeSeconds * 1000);
      if (expired > 0) {
        await this.discard(
          current.slice(0, expired),
          'RecordAgeExceeded',
          invocations,
          invocations > 0 ? 'Unhandled' : undefined,
        );
        current = current.slice(expired);
        continue;
      }
      const result = await this.host.invoke({ Records: current.map((p) => p.record) }, 'wait');
      if (this.abort.signal.aborted) return;
      invocations++;
      let functionError: 'Unhandled' | undefined = 'Unhandled';
      if (result.ok) {
        if (!this.source.reportBatchItemFailures) return;
        const failures = parseBatchItemFailures(
          result.payload,
          new Set(current.map((p) => p.record.dynamodb.SequenceNumber)),
        );
        if (failures !== 'invalid' && failures.length === 0) return;
        if (failures !== 'invalid') {
          // Everything before the lowest failed sequence number is done; retry from there.
          const checkpoint = Math.min(
            ...failures.map((id) => current.findIndex((p) => p.record.dynamodb.SequenceNumber === id)),
          );
          current = current.slice(checkpoint);
          functionError = undefined;
        } else {
          this.log('invalid batch item failures response: the whole batch failed');
        }
      }
      if (functionError !== undefined && this.source.bisectOnError && current.length > 1) {
        const half = Math.ceil(current.length / 2);
        await this.process(current.slice(0, half));
        await this.process(current.slice(half));
        return;
      }
      retries++;
      if (maximumRetryAttempts >= 0 && retries > maximumRetryAttempts) {
        await this.discard(current, 'RetryAttemptsExhausted', invocations, functionError);
        return;
      }
      await sleep(Math.min(2_000, 100 * 2 ** (retries - 1)), this.abort.signal);
    }
  }

  /** Sends Lambda's failure record (batch pointers, not the records) to the on-failure destination. */
  private async discard(
    records: Pending[],
    condition: FailureCondition,
    invocations: number,
    functionError?: 'Unhandled',
  ): Promise<void> {
    const first = records[0].record;
    const last = records[records.length - 1].record;
    const arrival = (r: StreamRecord) =>
      new Date((r.dynamodb.ApproximateCreationDateTime ?? Date.now() / 1000) * 1000).toISOString();
    const failure = {
      requestContext: {
        requestId: randomUUID(),
        functionArn: this.host.fn.arn,
        condition,
        approximateInvokeCount: invocations,
      },
      ...(invocations > 0
        ? {
            responseContext: {
              statusCode: 200,
              executedVersion: '$LATEST',
              ...(functionError ? { functionError } : {}),
            },
          }
        : {}),
      version: '1.0',
      timestamp: new Date().toISOString(),
      DDBStreamBatchInfo: {
        shardId: this.shardId,
        startSequenceNumber: first.dynamodb.SequenceNumber,
        endSequenceNumber: last.dynamodb.SequenceNumber,
        approximateArrivalOfFirstRecord: arrival(first),
        approximateArrivalOfLastRecord: arrival(last),
        batchSize: records.length,
        streamArn: this.streamArn,
      },
    };
    this.log(
      `discarded ${records.length} record(s) (${condition}) ${first.dynamodb.SequenceNumber}..${last.dynamodb.SequenceNumber}`,
    );
    if (this.destination.queue !== undefined) {
      await this.sqs.send(
        new SendMessageCommand({ QueueUrl: this.destination.queue.url, MessageBody: JSON.stringify(failure) }),
      );
    } else if (this.destination.description !== undefined) {
      this.log(
        `on-failure destination ${this.destination.description} is not emulated; failure record: ${JSON.stringify(failure)}`,
      );
    }
  }

  private toLambdaRecord(record: StreamRecord): StreamRecord {
    const known = record.eventName === 'INSERT' || record.eventName === 'MODIFY' || record.eventName === 'REMOVE';
    return {
      ...record,
      // DynamoDB Local reports TTL deletions with an unknown event name (docs/pitfalls.md); AWS reports a REMOVE by the service.
      ...(known
        ? {}
        : { eventName: 'REMOVE', userIdentity: { type: 'Service', principalId: 'dynamodb.amazonaws.com' } }),
      eventVersion: record.eventVersion ?? '1.1',
      eventSource: 'aws:dynamodb',
      awsRegion: this.region,
      eventSourceARN: this.streamArn,
    } as StreamRecord;
  }
}

function countWhile<T>(items: T[], predicate: (item: T) => boolean): number {
  let n = 0;
  while (n < items.length && predicate(items[n])) n++;
  return n;
}
