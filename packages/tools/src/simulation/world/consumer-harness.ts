import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { leaseHolderOf } from '@exactly-once/runtime/consumer/queue-consumer';
import type { RecordWork } from '@exactly-once/runtime/consumer/record-work';
import type { EventRef } from '@exactly-once/runtime/inbox/ports';
import { consumerWiring, type ConsumerWiring } from '@exactly-once/runtime/wiring/consumer-wiring';
import { settingsUnderGuards } from './guards/consumer-settings';
import { inboxClaimUnderGuard } from './guards/inbox-claim';
import { sequenceConditionUnderGuard } from './guards/sequence-condition';
import { recordTimer } from './guards/record-deadline';
import { workUnderGuard } from './guards/sent-fingerprint';
import { providerKeyRelease } from './guards/tenant-in-provider-key';
import { applying, guardedDocuments } from './guards/ledger-calls';
import type { Invocation } from './invocation';
import type { SimulationOptions } from './options';
import { parsedAsDeployed } from './parser-change';
import type { SimConsumer } from './port';
import { keyAsSent, type Release } from './releases';
import type { SimMessage, SimQueue } from './sqs';
import type { EngineState } from './engine-state';
import type { World } from './world';

/**
 * Pollers per consumer queue: the simulation runs 3, fewer where the spec's
 * maxConcurrency is lower (the event source mapping never runs more batches
 * at once than that). Lambda starts an SQS mapping at 5 concurrent batches and
 * scales up from there; 3 keeps batches of one queue contending while the
 * traces docs/simulation.md cites stay as they were.
 */
const SIMULATED_POLLERS = 3;

/**
 * The mechanism's harness for the consumers: each consumer's event source mapping (its pollers, the
 * batch it hands the function, what it deletes after), and the function: the consumer's deployed
 * handler (`makeHandler` of its entry module) on the invocation's clients, the virtual clock and the
 * simulated providers, with the guards switched off as the options say.
 */
export class ConsumerHarness {
  constructor(
    private readonly world: World<SimulationOptions>,
    private readonly engine: EngineState,
  ) {}

  /** Starts every consumer's pollers, round by round over the consumers, so their start times are drawn in one order per list. */
  start(): void {
    const { scheduler } = this.world;
    for (let c = 0; c < SIMULATED_POLLERS; c++)
      for (const consumer of this.world.consumers.values())
        if (c < Math.min(SIMULATED_POLLERS, consumer.spec.maxConcurrency))
          scheduler.at(scheduler.between(0, 200), () => this.pollQueue(consumer));
  }

  /** One poller of a consumer's event source mapping: a batch of up to the spec's size, then the next. */
  private pollQueue(consumer: SimConsumer): void {
    if (this.engine.stopped) return;
    const { scheduler } = this.world;
    const { queue } = consumer;
    const messages = queue.receive(consumer.spec.batchSize);
    if (messages.length === 0) {
      queue.waitForMessages(() => scheduler.at(scheduler.between(1, 20), () => this.pollQueue(consumer)));
      return;
    }
    void this.consumerBatch(consumer, messages).then(() =>
      scheduler.at(scheduler.between(1, 50), () => this.pollQueue(consumer)),
    );
  }

  /** One invocation of a consumer's deployed handler on a received batch, then what Lambda does with its answer. */
  private async consumerBatch(consumer: SimConsumer, messages: SimMessage[]): Promise<void> {
    const { world } = this;
    const { queue } = consumer;
    const timeoutSeconds = world.options.settings.consumerTimeoutSeconds;
    const invocation = world.invocation(consumer.spec.name, timeoutSeconds);
    const event = sqsEvent(queue, messages);
    this.traceReceipt(invocation, messages);
    const { releases } = this.engine;
    const release = releases.at(consumer.spec.name, world.scheduler.now);
    if (releases.active) world.scheduler.trace(`${invocation.name} runs the ${release.name} release`);
    const handler = consumer.makeHandler(this.consumerWiring(invocation, consumer, event, release));
    const context = world.contextOf(invocation, timeoutSeconds);
    this.acknowledge(
      invocation,
      queue,
      messages,
      await this.invoke(invocation, () => invocation.run(() => handler(event, context))),
    );
  }

  /**
   * The consumer's wiring (packages/runtime/src/wiring/consumer-wiring.ts) on one invocation's clients,
   * the virtual clock (in-process contention retries wait on it too) and the
   * simulated providers; then the guards switched off, each as the test-only
   * change it stands for. The ledger guards act below the ledgers, on the DynamoDB calls they send
   * (guards/ledger-calls.ts): each record's use case runs in `applying`, so a call knows whose it is.
   */
  private consumerWiring(
    invocation: Invocation,
    consumer: SimConsumer,
    event: SQSEvent,
    release: Release,
  ): ConsumerWiring {
    const { world } = this;
    const { guards } = world.options;
    const consumerName = consumer.spec.name;
    const guarded = guardedDocuments(invocation, consumerName, release, guards, this.engine.watch);
    const wiring = consumerWiring(consumer.config, {
      documents: sequenceConditionUnderGuard(
        guards.sequenceCondition,
        inboxClaimUnderGuard(guards.inboxClaim, guarded, consumerName),
      ),
      sqs: invocation.sqs,
      now: world.now,
      sleep: (ms) => invocation.sleep(ms),
      setTimer: recordTimer(guards.recordDeadline, invocation),
      random: world.scheduler.random,
      provider: (name) => this.provider(invocation, name, consumerName, release),
    });
    const settings = settingsUnderGuards(wiring.settings, guards, consumer.spec.fifo, event, world.scheduler.random);
    // A record's work names its try by the invocation's request id and the record's receipt (queue-consumer.ts).
    const messageIds = new Map(event.Records.map((r) => [leaseHolderOf(invocation.name, r), r.messageId]));
    const messageIdOf = (work: RecordWork): string => {
      const messageId = messageIds.get(work.leaseHolder);
      if (messageId === undefined) throw new Error(`No record of ${invocation.name} holds ${work.leaseHolder}`);
      return messageId;
    };
    return {
      ...wiring,
      settings,
      ledgerOptions:
        release.keys === undefined ? wiring.ledgerOptions : { ...wiring.ledgerOptions, keys: release.keys },
      withFaults: (apply) => {
        const decorated = wiring.withFaults(apply);
        return (applied, work) =>
          applying.run({ event: applied as EventRef, work, messageId: messageIdOf(work) }, async () => {
            const parsed = parsedAsDeployed(applied, world.scheduler.now, world.options.faults.parserChangeAtSeconds);
            const outcome = await decorated(parsed, workUnderGuard(guards.sentFingerprint, work));
            this.engine.watch.checkNotOwnCommit(work, outcome);
            return outcome;
          });
      },
    };
  }

  private traceReceipt(invocation: Invocation, messages: SimMessage[]): void {
    let ids = '';
    for (const m of messages) ids += ` ${m.messageId}`;
    this.world.scheduler.trace(`${invocation.name} got${ids}`);
  }

  /** The handler's response; undefined when the invocation threw or timed out (nothing is deleted: all come back). */
  private async invoke(
    invocation: Invocation,
    run: () => Promise<SQSBatchResponse>,
  ): Promise<SQSBatchResponse | undefined> {
    try {
      return await run();
    } catch (error) {
      this.world.scheduler.trace(`${invocation.name} invocation failed: ${(error as Error).name}`);
      return undefined;
    }
  }

  /** The event source mapping: deletes what succeeded; a crash or a thrown invocation deletes nothing. */
  private acknowledge(
    invocation: Invocation,
    queue: SimQueue,
    messages: SimMessage[],
    response: SQSBatchResponse | undefined,
  ): void {
    const { scheduler } = this.world;
    if (invocation.crashed || response === undefined) {
      const why = invocation.crashed ? 'crashed' : invocation.timedOut ? 'timed out' : 'failed';
      scheduler.trace(`${invocation.name} acked nothing (${why})`);
      return;
    }
    const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
    for (const message of messages) if (!failed.has(message.messageId)) queue.delete(message.handle!);
    scheduler.trace(`${invocation.name} acked ${messages.length - failed.size}, failed ${failed.size}`);
  }

  /**
   * A provider as the consumer's code sees it: the call reaches the provider
   * after the network's latency, the provider acts and answers after its own
   * (in flight meanwhile), and the record's deadline aborts the wait for the
   * answer (what was sent may still arrive).
   */
  private provider(invocation: Invocation, name: string, consumer: string, release: Release) {
    const { world, engine } = this;
    return {
      send: async (handedKey: string, payload: Record<string, unknown>, options?: { signal?: AbortSignal }) => {
        const { event } = applying.getStore() ?? {};
        const keyed = providerKeyRelease(world.options.guards.tenantInProviderKey, release);
        const idempotencyKey = keyAsSent(keyed, consumer, event, handedKey);
        engine.watch.checkNotSentAgain(idempotencyKey, invocation);
        await invocation.io(
          `${name}.send ${idempotencyKey}`,
          () => engine.providers.call(name, idempotencyKey, payload),
          { signal: options?.signal, answerAfterMs: (inFlightMs) => inFlightMs },
        );
        // A 2xx this invocation heard: it must record it (the done-mark) before anyone calls again.
        engine.watch.heard(idempotencyKey, invocation);
      },
    };
  }
}

/** The SQS event a consumer's event source mapping hands its function for a received batch. */
function sqsEvent(queue: SimQueue, messages: SimMessage[]): SQSEvent {
  return {
    Records: messages.map((m) => ({
      messageId: m.messageId,
      receiptHandle: m.handle!,
      body: m.body,
      attributes: {
        ApproximateReceiveCount: String(m.receiveCount),
        SentTimestamp: String(m.sentAt),
        SenderId: 'simulation',
        ApproximateFirstReceiveTimestamp: String(m.firstReceivedAt),
        ...(m.groupId === undefined ? {} : { MessageGroupId: m.groupId, MessageDeduplicationId: m.dedupId }),
      },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: `arn:aws:sqs:us-east-1:000000000000:${queue.options.name}`,
      awsRegion: 'us-east-1',
    })),
  };
}
