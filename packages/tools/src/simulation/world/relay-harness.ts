import { marshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue, DynamoDBStreamEvent } from 'aws-lambda';
import { DEFAULT_DISPATCHED_RETENTION_SECONDS } from '@exactly-once/runtime/aws/outbox-table';
import type { EventEnvelope } from '@exactly-once/runtime/envelope';
import { NO_FAULTS } from '@exactly-once/runtime/faults/plan';
import { relayFaults } from '@exactly-once/runtime/faults/relay-faults';
import type { EventPublisher } from '@exactly-once/runtime/outbox/ports';
import { outboxWiring, type OutboxConfig, type OutboxWiring } from '@exactly-once/runtime/wiring/outbox-wiring';
import {
  makeHandler as makeRelayHandler,
  type RelayFaults,
} from '@exactly-once/runtime/wiring/entry-points/relay-handler';
import { makeHandler as makeSweeperHandler } from '@exactly-once/runtime/wiring/entry-points/sweeper-handler';
import type { Item } from '../memory-dynamodb';
import type { Invocation } from './invocation';
import type { SimulationOptions } from './options';
import type { SimQueue } from './sqs';
import { StreamMapping, type BatchOutcome, type StreamRecordBase } from './stream';
import type { EngineState } from './engine-state';
import type { World } from './world';

const STREAM_SHARDS = 2;

export interface StreamRecord extends StreamRecordBase {
  event: EventEnvelope;
  /** The item as the stream carries it (NEW_IMAGE). */
  image: Record<string, AttributeValue>;
}

/**
 * The mechanism's harness for the outbox: the outbox table's stream and the relay's event source
 * mapping (batches, bisect, retries, the on-failure queue), the relay's function (its deployed
 * factory (`makeHandler` of entry-points/relay-handler.ts) with the fault-injection build's producer-resend decorator) and the sweeper
 * every minute, each invocation on its own simulated clients.
 */
export class RelayHarness {
  /** The relay mapping's on-failure queue. */
  readonly failures: SimQueue;
  readonly stream: StreamMapping<StreamRecord>;
  private readonly outboxConfig: OutboxConfig;
  private readonly relayFaults: RelayFaults;

  constructor(
    private readonly world: World<SimulationOptions>,
    private readonly engine: EngineState,
    outbox: { table: string; entityPartitionPrefix: string; retentionSeconds: number },
  ) {
    const { options, scheduler } = world;
    const s = options.settings;
    this.outboxConfig = {
      outboxTable: outbox.table,
      entityPartitionPrefix: outbox.entityPartitionPrefix,
      routes: world.routes,
      dispatchedRetentionSeconds: DEFAULT_DISPATCHED_RETENTION_SECONDS,
    };
    // The relay's own fault decorators (the fault-injection build's), rolling the producer-resend rate on the seed.
    const resendPlan = { ...NO_FAULTS, producerResend: options.faults.producerResend, random: scheduler.random };
    this.relayFaults = relayFaults({
      source: { current: () => Promise.resolve(resendPlan) },
      crash: (where) => {
        throw new Error(`the simulation injects no relay crash (${where})`);
      },
    });
    this.failures = engine.queue({
      name: 'relay-on-failure',
      fifo: false,
      visibilityTimeoutSeconds: 30,
      retentionSeconds: outbox.retentionSeconds,
    });
    this.stream = new StreamMapping<StreamRecord>(
      scheduler,
      {
        shards: STREAM_SHARDS,
        batchSize: s.relayBatchSize,
        retryAttempts: s.relayRetryAttempts,
        maxRecordAgeSeconds: s.relayMaxRecordAgeSeconds,
        bisectOnFunctionError: s.relayBisectOnFunctionError,
        redeliveryChance: options.faults.streamRedelivery,
      },
      (batch) => this.relayBatch(batch),
      (records, reason) =>
        // What the mapping sends is metadata about the batch; the event ids stand for it here.
        this.failures.send(JSON.stringify({ onFailure: records.map((r) => r.event.eventId) }), {
          attributes: { failureCause: `stream ${reason}` },
        }),
    );
  }

  /** An outbox item inserted: its stream record (unless the fault loses it), on its entity's shard. */
  insert(item: Item, event: EventEnvelope): void {
    const { scheduler } = this.world;
    if (scheduler.chance(this.world.options.faults.streamRecordLost)) {
      scheduler.fault('stream-record-lost', event.eventId);
      return;
    }
    // Per-key order: an entity's records always land on one shard.
    this.stream.insert(hashOf(String(item.pk)), {
      sequenceNumber: this.stream.nextSequenceNumber(),
      event,
      image: marshall(item, { removeUndefinedValues: true }) as Record<string, AttributeValue>,
      at: scheduler.now,
    });
  }

  /**
   * One relay invocation: its batch response, or a function error when it
   * crashed, threw or was stopped by its timeout (the mapping then bisects).
   */
  private async relayBatch(batch: StreamRecord[]): Promise<BatchOutcome> {
    const { world } = this;
    const invocation = world.invocation('relay', world.options.settings.relayTimeoutSeconds);
    world.scheduler.trace(
      `${invocation.name} got ${batch.length} stream records ${batch[0].sequenceNumber}..${batch[batch.length - 1].sequenceNumber}`,
    );
    const wiring = this.outboxWiring(invocation);
    // The resend fault publishes through `publisherWith`: counted here as it goes out.
    const relay = makeRelayHandler({
      wiring: { ...wiring, publisherWith: (o) => this.countingResends(wiring.publisherWith(o)) },
      faults: this.relayFaults,
    });
    try {
      const response = await invocation.run(() =>
        relay(streamEvent(batch), world.contextOf(invocation, world.options.settings.relayTimeoutSeconds)),
      );
      if (invocation.crashed) {
        world.scheduler.trace(`${invocation.name} crashed: function error`);
        return { kind: 'function-error' };
      }
      const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
      const firstFailed = batch.findIndex((r) => failed.has(r.sequenceNumber));
      return { kind: 'response', failedFrom: firstFailed === -1 ? batch.length : firstFailed };
    } catch (error) {
      world.scheduler.trace(`${invocation.name} failed: ${String(error)}`);
      return { kind: 'function-error' };
    }
  }

  private countingResends(publisher: EventPublisher): EventPublisher {
    return {
      publish: (events) => {
        for (const e of events) this.world.scheduler.fault('producer-resend', e.eventId);
        return publisher.publish(events);
      },
    };
  }

  /** The sweeper's schedule: an invocation every minute, republishing what the stream missed. */
  sweep(): void {
    const { world } = this;
    const { scheduler, options } = world;
    if (this.engine.stopped) return;
    // Weeks of virtual time: while nothing is pending in the outbox and no client is busy, a sweep
    // finds nothing, so it is skipped (40,000 empty sweeps a month would be most of the run's events).
    if (options.longRedrive !== undefined && this.engine.pendingOutbox === 0 && world.activeClients === 0) {
      scheduler.at(60_000, () => this.sweep());
      return;
    }
    const invocation = world.invocation('sweeper', options.settings.sweeperTimeoutSeconds);
    const sweeper = makeSweeperHandler({
      wiring: this.outboxWiring(invocation),
      minAgeSeconds: options.settings.sweepAgeSeconds,
    });
    invocation
      .run(() => sweeper(undefined, world.contextOf(invocation, options.settings.sweeperTimeoutSeconds)))
      .then(
        (result) => {
          if (result.republished > 0) scheduler.trace(`${invocation.name} ${JSON.stringify(result)}`);
        },
        (error) => scheduler.trace(`${invocation.name} failed: ${String(error)}`),
      );
    scheduler.at(60_000, () => this.sweep());
  }

  private outboxWiring(invocation: Invocation): OutboxWiring {
    return outboxWiring(this.outboxConfig, {
      documents: invocation.documents,
      sqs: invocation.sqs,
      now: this.world.now,
    });
  }
}

/** The stream event the relay's event source mapping delivers: INSERTs, new images, in shard order. */
function streamEvent(batch: StreamRecord[]): DynamoDBStreamEvent {
  return {
    Records: batch.map((r) => ({
      eventID: r.sequenceNumber,
      eventName: 'INSERT',
      eventSource: 'aws:dynamodb',
      awsRegion: 'us-east-1',
      dynamodb: { SequenceNumber: r.sequenceNumber, NewImage: r.image, StreamViewType: 'NEW_IMAGE' },
    })),
  };
}

function hashOf(text: string): number {
  let hash = 0;
  for (let i = 0; i < text.length; i++) hash = (hash * 31 + text.charCodeAt(i)) >>> 0;
  return hash;
}
