import * as path from 'node:path';
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import type {
  APIGatewayProxyEvent,
  Context,
  DynamoDBBatchResponse,
  DynamoDBStreamEvent,
  SQSBatchResponse,
  SQSEvent,
} from 'aws-lambda';
import type { OrderEvent } from '../../lambdas/shop/domain/events';
import { lambdaContext } from './api-events';
import { createStackTables, scanAll, useEmulatorEnvironment } from './dynamodb';
import {
  createTestQueues,
  receiveMatching,
  shopRelayFilters,
  StreamReader,
  testRoutes,
  testSqsClient,
  type TestQueues,
} from './messaging';
import { TEST_DEDUPE } from './dedupe';

/** The project's root: entry modules are named relative to it, as the stack names them. */
const PROJECT_ROOT = path.join(__dirname, '..', '..');

type ApiHandler = (
  e: APIGatewayProxyEvent,
  c: Context,
) => Promise<{ statusCode: number; body: string; headers: Record<string, string> }>;
type StreamHandler = (e: DynamoDBStreamEvent, c: Context) => Promise<DynamoDBBatchResponse>;
type SqsHandler = (e: SQSEvent, c: Context) => Promise<SQSBatchResponse>;

export interface DynamoCallLog {
  calls: string[];
  /** Fails a call when it returns true; `input` is the command's input (e.g. its TableName). */
  failWhen?: (command: string, input: { TableName?: string }) => boolean;
}

/**
 * The whole messaging half wired by hand on the real emulators: tables as the
 * stack declares them, queues with the stack's redrive settings, and each
 * handler loaded in its own module registry with its own environment, as each
 * Lambda function has its own. `deliver` plays the SQS event source: it hands
 * the handler what it received and deletes what the handler did not report failed.
 */
export class PipelineFixture {
  tables!: Awaited<ReturnType<typeof createStackTables>>;
  queues!: TestQueues;
  stream!: StreamReader;
  createOrder!: ApiHandler;
  cancelOrder!: ApiHandler;
  relay!: StreamHandler;
  fulfilment!: SqsHandler;
  loyalty!: SqsHandler;
  readonly dynamoCalls: Record<'relay' | 'fulfilment' | 'loyalty', DynamoCallLog> = {
    relay: { calls: [] },
    fulfilment: { calls: [] },
    loyalty: { calls: [] },
  };

  async start(options: { visibilityTimeoutSeconds?: number; extraEnv?: Record<string, string> } = {}): Promise<void> {
    useEmulatorEnvironment();
    this.tables = await createStackTables();
    this.queues = await createTestQueues({ visibilityTimeoutSeconds: options.visibilityTimeoutSeconds });
    this.stream = new StreamReader(this.tables.names.Orders, shopRelayFilters());
    const common = {
      ORDERS_TABLE_NAME: this.tables.names.Orders,
      OUTBOX_TABLE_NAME: this.tables.names.Orders,
      OUTBOX_ENTITY_PARTITION_PREFIX: 'ORDER#',
      OUTBOX_DISPATCHED_RETENTION_SECONDS: '604800',
      IDEMPOTENCY_TABLE_NAME: this.tables.names.Idempotency,
      IDEMPOTENCY_KEY_EXPIRY_SECONDS: '86400',
      EFFECTS_TABLE_NAME: this.tables.names.Effects,
      PROVIDER_LOG_TABLE_NAME: this.tables.names.ProviderLog,
      CONSUMER_ROUTES: JSON.stringify(testRoutes(this.queues)),
      INBOX_TTL_SECONDS: String(TEST_DEDUPE.claimTtlSeconds),
      DEDUPE_HORIZON_SECONDS: String(TEST_DEDUPE.horizonSeconds),
      VISIBILITY_TIMEOUT_SECONDS: String(options.visibilityTimeoutSeconds ?? 180),
      ...options.extraEnv,
    };
    this.createOrder = (await this.load('lambdas/shop/entry-points/create-order.ts', common)).handler as ApiHandler;
    this.cancelOrder = (await this.load('lambdas/shop/entry-points/cancel-order.ts', common)).handler as ApiHandler;
    this.relay = (await this.load('lambdas/exactly-once/wiring/relay-handler.ts', common, this.dynamoCalls.relay))
      .handler as StreamHandler;
    this.fulfilment = (
      await this.load(
        'lambdas/shop/entry-points/fulfilment-consumer.ts',
        { ...common, QUEUE_URL: this.queues.fifoQueueUrl, DEAD_LETTER_QUEUE_URL: this.queues.fifoDlqUrl },
        this.dynamoCalls.fulfilment,
      )
    ).handler as SqsHandler;
    this.loyalty = (
      await this.load(
        'lambdas/shop/entry-points/loyalty-consumer.ts',
        { ...common, QUEUE_URL: this.queues.standardQueueUrl, DEAD_LETTER_QUEUE_URL: this.queues.standardDlqUrl },
        this.dynamoCalls.loyalty,
      )
    ).handler as SqsHandler;
  }

  async stop(): Promise<void> {
    this.stream.close();
    await this.tables.drop();
  }

  /** Loads an entry module (relative to the project root) in a fresh registry with the given environment, counting its DynamoDB calls. */
  private async load(entry: string, env: Record<string, string>, log?: DynamoCallLog): Promise<{ handler: unknown }> {
    Object.assign(process.env, env);
    let loaded: { handler: unknown } | undefined;
    await jest.isolateModulesAsync(async () => {
      if (log !== undefined) {
        const clients = await import('../../lambdas/exactly-once/aws/clients');
        clients.dynamoDbClient().middlewareStack.add(
          (next, context) => async (args) => {
            const command = context.commandName ?? 'unknown';
            log.calls.push(command);
            if (log.failWhen?.(command, (args as { input?: { TableName?: string } }).input ?? {}))
              throw Object.assign(new Error('injected dependency failure'), { code: 'ECONNRESET' });
            return next(args);
          },
          { step: 'initialize', name: 'countCalls' },
        );
      }
      loaded = (await import(path.join(PROJECT_ROOT, entry))) as { handler: unknown };
    });
    return loaded!;
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
    consumer: 'fulfilment' | 'loyalty',
    event: SQSEvent,
    options: { crashBeforeAck?: boolean } = {},
  ): Promise<SQSBatchResponse> {
    const handler = consumer === 'fulfilment' ? this.fulfilment : this.loyalty;
    const queueUrl = consumer === 'fulfilment' ? this.queues.fifoQueueUrl : this.queues.standardQueueUrl;
    let response: SQSBatchResponse;
    try {
      response = await handler(event, lambdaContext(30_000));
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
          QueueUrl: queueUrl,
          Entries: done.map((r, i) => ({ Id: String(i), ReceiptHandle: r.receiptHandle })),
        }),
      );
      sqs.destroy();
    }
    return response;
  }

  /** Receives this test's messages only: those whose body includes `marker` (an order or event id). */
  async receive(consumer: 'fulfilment' | 'loyalty', count: number, marker: string): Promise<SQSEvent> {
    const queueUrl = consumer === 'fulfilment' ? this.queues.fifoQueueUrl : this.queues.standardQueueUrl;
    return receiveMatching(queueUrl, count, marker);
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

  /** Sends an event to the FIFO queue as the outbox publisher does: group = entityId, dedup id = eventId. */
  sendToFifo(event: OrderEvent): Promise<void> {
    return this.send(this.queues.fifoQueueUrl, JSON.stringify(event), {
      groupId: event.entityId,
      dedupId: event.eventId,
    });
  }

  /**
   * Moves this test's messages (body includes `marker`) from a DLQ back to its
   * source the portable way: receive, send, delete. Another test's dead letters stay.
   */
  async redrive(dlqUrl: string, sourceUrl: string, fifo: boolean, marker: string): Promise<number> {
    const sqs = testSqsClient();
    const event = await receiveMatching(dlqUrl, 10, marker, 1_500);
    for (const record of event.Records) {
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: sourceUrl,
          MessageBody: record.body,
          ...(fifo
            ? {
                MessageGroupId: record.attributes.MessageGroupId ?? 'redrive',
                MessageDeduplicationId: `redrive-${record.messageId}`,
              }
            : {}),
        }),
      );
      await sqs.send(new DeleteMessageCommand({ QueueUrl: dlqUrl, ReceiptHandle: record.receiptHandle }));
    }
    sqs.destroy();
    return event.Records.length;
  }

  async effects(): Promise<Record<string, Record<string, unknown>>> {
    const items = await scanAll(this.tables.names.Effects);
    return Object.fromEntries(items.map((i) => [String(i.pk), i]));
  }

  async providerLog(): Promise<Record<string, Record<string, unknown>>> {
    const items = await scanAll(this.tables.names.ProviderLog);
    return Object.fromEntries(items.map((i) => [String(i.idempotencyKey), i]));
  }
}
