import type { Scheduler } from './scheduler';

/**
 * A stream event source mapping in virtual time (DynamoDB Streams -> Lambda),
 * with the semantics of the relay's mapping:
 * - per-key shards, one batch in flight per shard, records in shard order;
 * - a partial batch response: the records before the first reported failure
 *   are done; the rest is retried, as one retry attempt;
 * - a function error (the invocation crashed, threw or timed out): with
 *   bisect on, a batch of more than one record is split in two and the halves
 *   are retried one after the other, each with the full retry attempts; a batch
 *   of one (or any batch with bisect off) is retried as one retry attempt;
 * - past `retryAttempts` retries, the batch goes to the on-failure destination
 *   and the shard moves on;
 * - a record older than `maxRecordAgeSeconds` when a batch is read is not
 *   processed: it goes to the on-failure destination;
 * - after a fully successful batch, the next read is back to `batchSize`.
 */
export interface StreamMappingSettings {
  shards: number;
  batchSize: number;
  retryAttempts: number;
  maxRecordAgeSeconds: number;
  bisectOnFunctionError: boolean;
  /** A successfully processed batch is delivered again (at-least-once). */
  redeliveryChance: number;
}

export interface StreamRecordBase {
  sequenceNumber: string;
  /** Virtual ms at which the record entered the stream. */
  at: number;
}

/** How one invocation ended: `failedFrom` is the index of the first record to retry (batch.length: all done). */
export type BatchOutcome = { kind: 'response'; failedFrom: number } | { kind: 'function-error' };

export type OnFailureReason = 'retries-exhausted' | 'record-age';

interface Shard<R> {
  records: R[];
  position: number;
  attempts: number;
  /** Sizes of the (bisected) batches to read next, in order; empty: read up to the batch size. */
  splits: number[];
  /** Nothing to read: the next insert wakes the poller. */
  idle: boolean;
}

export class StreamMapping<R extends StreamRecordBase> {
  private readonly shards: Shard<R>[];
  private sequence = 0;
  private stopped = false;

  constructor(
    private readonly scheduler: Scheduler,
    readonly settings: StreamMappingSettings,
    private readonly invoke: (batch: R[]) => Promise<BatchOutcome>,
    private readonly onFailure: (records: R[], reason: OnFailureReason) => void,
  ) {
    this.shards = Array.from({ length: settings.shards }, () => ({
      records: [],
      position: 0,
      attempts: 0,
      splits: [],
      idle: false,
    }));
  }

  /** The next sequence number, as the stream assigns them (increasing, fixed width). */
  nextSequenceNumber(): string {
    return String(++this.sequence).padStart(12, '0');
  }

  /** Starts one poller per shard. */
  start(): void {
    for (const shard of this.shards) this.scheduler.at(this.scheduler.between(0, 500), () => this.poll(shard));
  }

  stop(): void {
    this.stopped = true;
  }

  /** Appends a record to the shard of `key` (per-key order). */
  insert(key: number, record: R): void {
    const shard = this.shards[key % this.shards.length];
    shard.records.push(record);
    if (shard.idle) {
      shard.idle = false;
      // The mapping's batching window (1 s) lets a batch fill before the function is invoked.
      this.scheduler.at(this.scheduler.between(0, 1000), () => this.poll(shard));
    }
  }

  /** Records not yet processed or sent to the on-failure destination, per shard. */
  backlog(): number[] {
    return this.shards.map((s) => s.records.length - s.position);
  }

  private poll(shard: Shard<R>): void {
    if (this.stopped) return;
    const { scheduler, settings } = this;
    this.discardExpired(shard);
    if (shard.position >= shard.records.length) {
      shard.idle = true;
      return;
    }
    const size = shard.splits[0] ?? settings.batchSize;
    const batch = shard.records.slice(shard.position, shard.position + size);
    void this.invoke(batch).then((outcome) => {
      if (outcome.kind === 'function-error' && settings.bisectOnFunctionError && batch.length > 1) {
        // Splitting spends no retry attempt: the halves are tried in order, each with its own retry attempts
        // (as the local runtime's stream poller does, packages/tools/src/local-runtime/sources/stream-poller.ts).
        const first = Math.ceil(batch.length / 2);
        shard.splits.splice(0, shard.splits.length > 0 ? 1 : 0, first, batch.length - first);
        shard.attempts = 0;
        scheduler.count('stream-bisect', `${batch.length} records -> ${first} + ${batch.length - first}`);
      } else {
        const failedFrom = outcome.kind === 'function-error' ? 0 : outcome.failedFrom;
        if (failedFrom < batch.length) this.retry(shard, batch, failedFrom);
        else {
          shard.attempts = 0;
          if (scheduler.chance(settings.redeliveryChance))
            scheduler.fault('stream-redelivery', `${batch.length} records`);
          else this.consume(shard, batch.length);
        }
      }
      scheduler.at(scheduler.between(10, 500), () => this.poll(shard));
    });
  }

  /** The records before `failedFrom` are done; the rest is retried, or given up on past the retry attempts. */
  private retry(shard: Shard<R>, batch: R[], failedFrom: number): void {
    this.consume(shard, failedFrom);
    const remaining = batch.length - failedFrom;
    // The retry reads only the remaining records ("bisected at the returned sequence number").
    if (shard.splits.length > 0) shard.splits[0] = remaining;
    else shard.splits.unshift(remaining);
    shard.attempts += 1;
    if (shard.attempts <= this.settings.retryAttempts) return;
    const skipped = batch.slice(failedFrom);
    this.scheduler.count(
      'stream-retries-exhausted',
      `${skipped.length} records to the on-failure destination after ${shard.attempts - 1} retries`,
    );
    this.onFailure(skipped, 'retries-exhausted');
    this.consume(shard, skipped.length);
    shard.attempts = 0;
  }

  /** Records past the maximum record age are not processed: they go to the on-failure destination. */
  private discardExpired(shard: Shard<R>): void {
    const oldest = this.scheduler.now - this.settings.maxRecordAgeSeconds * 1000;
    let expired = 0;
    // Records enter a shard in time order: the expired ones are a prefix.
    while (shard.position + expired < shard.records.length && shard.records[shard.position + expired].at < oldest)
      expired += 1;
    if (expired === 0) return;
    const records = shard.records.slice(shard.position, shard.position + expired);
    this.scheduler.count(
      'stream-record-age',
      `${expired} records older than ${this.settings.maxRecordAgeSeconds} s to the on-failure destination`,
    );
    this.onFailure(records, 'record-age');
    const current = shard.splits[0];
    this.consume(shard, expired);
    // The batch being retried is gone: the next one starts with its own retry attempts.
    if (current === undefined || expired >= current) shard.attempts = 0;
  }

  /** Moves the shard past `n` records, shrinking (and dropping) the pending bisected batches they belonged to. */
  private consume(shard: Shard<R>, n: number): void {
    shard.position += n;
    let left = n;
    while (left > 0 && shard.splits.length > 0) {
      const taken = Math.min(left, shard.splits[0]);
      shard.splits[0] -= taken;
      left -= taken;
      if (shard.splits[0] === 0) shard.splits.shift();
    }
  }
}
