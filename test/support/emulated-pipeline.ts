import * as path from 'node:path';
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import type {
  Context,
  DynamoDBBatchResponse,
  DynamoDBRecord,
  DynamoDBStreamEvent,
  SQSBatchResponse,
  SQSEvent,
} from 'aws-lambda';
import type { ConsumerSpec, EventEnvelope } from '@exactly-once/runtime';
import { lambdaContext } from '@exactly-once/runtime/testing';
import { matchesAnyFilter } from '@exactly-once/tools/local-runtime/sources/event-filter';
import { PROBE_CONSUMERS } from '../exactly-once/fixtures/probe-spec';
import { PROBE_LEDGER_SPEC } from '../exactly-once/fixtures/probe-ledger-spec';
import { THING_PK_PREFIX } from '../exactly-once/fixtures/probe-things';
import { TEST_DEDUPE } from './dedupe';
import { scanAll, useEmulatorEnvironment, type EmulatedTables } from './emulated-dynamodb';
import { receiveMatching, StreamReader, testSqsClient } from './emulated-messaging';
import {
  createEmulatedQueues,
  createEmulatedTables,
  emulatedRelayFilters,
  emulatedStack,
  type EmulatedQueues,
  type EmulatedTableName,
} from './emulated-stack';

/** The project's root: entry modules are named relative to it, as the stack names them. */
const PROJECT_ROOT = path.join(__dirname, '..', '..');

type StreamHandler = (e: DynamoDBStreamEvent, c: Context) => Promise<DynamoDBBatchResponse>;
type SqsHandler = (e: SQSEvent, c: Context) => Promise<SQSBatchResponse>;

export interface DynamoCallLog {
  calls: string[];
  /**
   * When present, every call asks for its consumed capacity (`INDEXES`: table and each index) and the
   * answer's ConsumedCapacity is kept here, by command: what DynamoDB Local bills for the call.
   */
  consumed?: { command: string; capacity: unknown; input: unknown }[];
  /** Fails a call when it returns true; `input` is the command's input (e.g. its TableName). */
  failWhen?: (command: string, input: { TableName?: string }) => boolean;
}

/**
 * The consumers of the emulated pipeline: the probe consumers (the generic entity effect, standard
 * and FIFO) and the probe-ledger consumer (an effect a later event undoes and supersedes).
 */
export const PIPELINE_CONSUMERS: readonly ConsumerSpec[] = [...PROBE_CONSUMERS, PROBE_LEDGER_SPEC];

/** A consumer of a pipeline: its handler, its queue and DLQ, and whether they are FIFO. */
export interface PipelineConsumer {
  handler: SqsHandler;
  queueUrl: string;
  deadLetterQueueUrl: string;
  fifo: boolean;
}

/**
 * A messaging half wired by hand on the real emulators: a stream relay and consumers, each loaded in
 * its own module registry with its own environment, as each Lambda function has its own. `deliver`
 * plays the SQS event source: it hands the handler what it received and deletes what the handler did
 * not report failed. A subclass's `start` creates the tables and queues and loads the handlers.
 */
export abstract class HandWiredPipeline {
  stream!: StreamReader;
  relay!: StreamHandler;
  readonly consumers: Record<string, PipelineConsumer> = {};
  /** Every DynamoDB call of the relay (`relay`) and of each consumer (by name), and a switch to fail them. */
  readonly dynamoCalls: Record<string, DynamoCallLog> = {};
  /** The effects table and the provider log, as `effects` and `providerLog` read them. */
  protected abstract get effectsTableName(): string;
  protected abstract get providerLogTableName(): string;

  /** Loads an entry module (relative to the project root) in a fresh registry with the given environment, counting its DynamoDB calls in `log`. */
  protected async load(entry: string, env: Record<string, string>, log?: DynamoCallLog): Promise<{ handler: unknown }> {
    Object.assign(process.env, env);
    let loaded: { handler: unknown } | undefined;
    await jest.isolateModulesAsync(async () => {
      if (log !== undefined) {
        const clients = await import('@exactly-once/runtime/aws/clients');
        clients.dynamoDbClient().middlewareStack.add(
          (next, context) => async (args) => {
            const command = context.commandName ?? 'unknown';
            log.calls.push(command);
            const input = (args as { input?: { TableName?: string; ReturnConsumedCapacity?: string } }).input ?? {};
            if (log.failWhen?.(command, input))
              throw Object.assign(new Error('injected dependency failure'), { code: 'ECONNRESET' });
            if (log.consumed === undefined) return next(args);
            input.ReturnConsumedCapacity ??= 'INDEXES';
            const consumed = log.consumed;
            const keep = (capacity: unknown) => consumed.push({ command, capacity, input });
            try {
              const result = await next(args);
              keep((result.output as { ConsumedCapacity?: unknown }).ConsumedCapacity);
              return result;
            } catch (error) {
              keep((error as { ConsumedCapacity?: unknown }).ConsumedCapacity);
              throw error;
            }
          },
          { step: 'initialize', name: 'countCalls' },
        );
      }
      loaded = (await import(path.resolve(PROJECT_ROOT, entry))) as { handler: unknown };
    });
    return loaded!;
  }

  /** Loads the relay with `env`, counting its DynamoDB calls under `relay`. */
  protected async loadRelay(env: Record<string, string>): Promise<void> {
    this.dynamoCalls.relay = { calls: [] };
    this.relay = (await this.load('packages/runtime/src/wiring/handlers/relay-handler.ts', env, this.dynamoCalls.relay))
      .handler as StreamHandler;
  }

  /** Loads a consumer's entry with `env` and its queue's, counting its DynamoDB calls under its name. */
  protected async loadConsumer(
    name: string,
    entry: string,
    env: Record<string, string>,
    queues: Omit<PipelineConsumer, 'handler'>,
  ): Promise<void> {
    this.dynamoCalls[name] = { calls: [] };
    const { handler } = await this.load(
      entry,
      { ...env, QUEUE_URL: queues.queueUrl, DEAD_LETTER_QUEUE_URL: queues.deadLetterQueueUrl },
      this.dynamoCalls[name],
    );
    this.consumers[name] = { ...queues, handler: handler as SqsHandler };
  }

  /** Relays whatever the stream holds now (outbox INSERTs only, like the mapping's filter). */
  async relayStream(): Promise<{ event: DynamoDBStreamEvent; response: DynamoDBBatchResponse }> {
    const event = await this.stream.next();
    const response = await this.relay(event, lambdaContext());
    return { event, response };
  }

  /**
   * One delivery by the SQS event source: invoke with the received batch, then
   * delete the messages not reported failed (unless `crashBeforeAck`).
   */
  async deliver(
    consumer: string,
    event: SQSEvent,
    options: { crashBeforeAck?: boolean } = {},
  ): Promise<SQSBatchResponse> {
    let response: SQSBatchResponse;
    try {
      response = await this.consumers[consumer].handler(event, lambdaContext(30_000));
    } catch (error) {
      // A thrown batch (all records failed) leaves every message on the queue.
      response = { batchItemFailures: event.Records.map((r) => ({ itemIdentifier: r.messageId })) };
      if (!(error instanceof Error) || !error.name.includes('BatchFailure')) throw error;
    }
    if (options.crashBeforeAck) return response;
    const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
    const done = event.Records.filter((r) => !failed.has(r.messageId));
    if (done.length > 0) {
      const sqs = testSqsClient();
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: this.consumers[consumer].queueUrl,
          Entries: done.map((r, i) => ({ Id: String(i), ReceiptHandle: r.receiptHandle })),
        }),
      );
      sqs.destroy();
    }
    return response;
  }

  /** Receives this test's messages only: those whose body includes `marker` (an entity or event id). */
  async receive(consumer: string, count: number, marker: string): Promise<SQSEvent> {
    return receiveMatching(this.consumers[consumer].queueUrl, count, marker);
  }

  /** Ends the message's invisibility now; one already visible again (its backoff ran out) is left as it is. */
  async makeVisibleAgain(queueUrl: string, receiptHandle: string): Promise<void> {
    const sqs = testSqsClient();
    try {
      await sqs.send(
        new ChangeMessageVisibilityCommand({ QueueUrl: queueUrl, ReceiptHandle: receiptHandle, VisibilityTimeout: 0 }),
      );
    } catch (error) {
      if ((error as Error).name !== 'MessageNotInflight') throw error;
    } finally {
      sqs.destroy();
    }
  }

  async send(queueUrl: string, body: string, fifo?: { groupId: string; dedupId: string }): Promise<void> {
    const sqs = testSqsClient();
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: body,
        ...(fifo ? { MessageGroupId: fifo.groupId, MessageDeduplicationId: fifo.dedupId } : {}),
      }),
    );
    sqs.destroy();
  }

  /** Sends an event to a FIFO consumer's queue as the outbox publisher does: group = entityId, dedup id = eventId. */
  sendToFifo(consumer: string, event: EventEnvelope): Promise<void> {
    return this.send(this.consumers[consumer].queueUrl, JSON.stringify(event), {
      groupId: event.entityId,
      dedupId: event.eventId,
    });
  }

  /**
   * Moves this test's messages (body includes `marker`) from a consumer's DLQ back to its queue the
   * portable way: receive, send, delete. Another test's dead letters stay.
   */
  async redrive(consumer: string, marker: string): Promise<number> {
    const { queueUrl, deadLetterQueueUrl, fifo } = this.consumers[consumer];
    const sqs = testSqsClient();
    const event = await receiveMatching(deadLetterQueueUrl, 10, marker, 1_500);
    for (const record of event.Records) {
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: queueUrl,
          MessageBody: record.body,
          ...(fifo
            ? {
                MessageGroupId: record.attributes.MessageGroupId ?? 'redrive',
                MessageDeduplicationId: `redrive-${record.messageId}`,
              }
            : {}),
        }),
      );
      await sqs.send(new DeleteMessageCommand({ QueueUrl: deadLetterQueueUrl, ReceiptHandle: record.receiptHandle }));
    }
    sqs.destroy();
    return event.Records.length;
  }

  /** The effects table's items by pk. */
  async effects(): Promise<Record<string, Record<string, unknown>>> {
    const items = await scanAll(this.effectsTableName);
    return Object.fromEntries(items.map((i) => [String(i.pk), i]));
  }

  /** The recording provider's calls by idempotency key. */
  async providerLog(): Promise<Record<string, Record<string, unknown>>> {
    const items = await scanAll(this.providerLogTableName);
    return Object.fromEntries(items.map((i) => [String(i.idempotencyKey), i]));
  }
}

/**
 * The mechanism's messaging half on the emulators for the neutral fixture: the construct's tables and
 * queues (emulated-stack.ts), the relay, and each consumer of PIPELINE_CONSUMERS loaded from its
 * spec's entry.
 */
export class EmulatedPipeline extends HandWiredPipeline {
  tables!: EmulatedTables<EmulatedTableName>;
  queues!: EmulatedQueues;

  protected get effectsTableName(): string {
    return this.tables.names.Effects;
  }

  protected get providerLogTableName(): string {
    return this.tables.names.ProviderLog;
  }

  async start(options: { visibilityTimeoutSeconds?: number; extraEnv?: Record<string, string> } = {}): Promise<void> {
    useEmulatorEnvironment();
    this.tables = await createEmulatedTables(PIPELINE_CONSUMERS);
    this.queues = await createEmulatedQueues(
      { visibilityTimeoutSeconds: options.visibilityTimeoutSeconds },
      PIPELINE_CONSUMERS,
    );
    this.stream = new StreamReader(this.tables.names.Things, emulatedRelayFilters(PIPELINE_CONSUMERS));
    const common = {
      OUTBOX_TABLE_NAME: this.tables.names.Things,
      OUTBOX_ENTITY_PARTITION_PREFIX: THING_PK_PREFIX,
      OUTBOX_DISPATCHED_RETENTION_SECONDS: '604800',
      EFFECTS_TABLE_NAME: this.tables.names.Effects,
      PROVIDER_LOG_TABLE_NAME: this.tables.names.ProviderLog,
      CONSUMER_ROUTES: JSON.stringify(this.queues.routes),
      INBOX_TTL_SECONDS: String(TEST_DEDUPE.claimTtlSeconds),
      DEDUPE_HORIZON_SECONDS: String(TEST_DEDUPE.horizonSeconds),
      VISIBILITY_TIMEOUT_SECONDS: String(options.visibilityTimeoutSeconds ?? 180),
      ...options.extraEnv,
    };
    await this.loadRelay(common);
    for (const spec of PIPELINE_CONSUMERS)
      await this.loadConsumer(spec.name, spec.entry, common, { ...this.queues.consumers[spec.name], fifo: spec.fifo });
  }

  async stop(): Promise<void> {
    this.stream.close();
    await this.tables.drop();
  }

  /** The consumer's queue and DLQ, as the stack declares them, and the queue's maxReceiveCount. */
  queueOf(consumer: string): { queueUrl: string; deadLetterQueueUrl: string; maxReceiveCount: number } {
    return {
      ...this.queues.consumers[consumer],
      maxReceiveCount: emulatedStack(PIPELINE_CONSUMERS).consumerQueueIds[consumer].maxReceiveCount,
    };
  }

  /** Whether a stream record passes the relay's event source mapping filter, as the stack declares it (the local runtime's filter engine). */
  passesRelayFilter(record: DynamoDBRecord): boolean {
    return matchesAnyFilter(emulatedRelayFilters(PIPELINE_CONSUMERS), record);
  }
}
