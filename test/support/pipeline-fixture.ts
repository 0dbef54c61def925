import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { createStackTables, useEmulatorEnvironment } from './dynamodb';
import { HandWiredPipeline } from './emulated-pipeline';
import { createTestQueues, shopRelayFilters, StreamReader, testRoutes, type TestQueues } from './messaging';
import { TEST_DEDUPE } from './dedupe';

type ApiHandler = (
  e: APIGatewayProxyEvent,
  c: Context,
) => Promise<{ statusCode: number; body: string; headers: Record<string, string> }>;

/**
 * The shop's messaging half wired by hand on the real emulators: tables as the shop's stack declares
 * them, queues with its redrive settings, its API's create and cancel, the relay and its two consumers
 * (`fulfilment` on the FIFO queue, `loyalty` on the standard one), each handler loaded in its own
 * module registry with its own environment (HandWiredPipeline).
 */
export class PipelineFixture extends HandWiredPipeline {
  tables!: Awaited<ReturnType<typeof createStackTables>>;
  queues!: TestQueues;
  createOrder!: ApiHandler;
  cancelOrder!: ApiHandler;

  protected get effectsTableName(): string {
    return this.tables.names.Effects;
  }

  protected get providerLogTableName(): string {
    return this.tables.names.ProviderLog;
  }

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
    this.dynamoCalls.createOrder = { calls: [] };
    this.createOrder = (await this.load('lambdas/shop/handlers/create-order.ts', common, this.dynamoCalls.createOrder))
      .handler as ApiHandler;
    this.cancelOrder = (await this.load('lambdas/shop/handlers/cancel-order.ts', common)).handler as ApiHandler;
    await this.loadRelay(common);
    // As the stack sets it from each spec's ledger (fulfilment's is 'sequenced'): a handler refuses another.
    const fulfilmentEnv = { ...common, CONSUMER_LEDGER: 'sequenced' };
    await this.loadConsumer('fulfilment', 'lambdas/shop/handlers/fulfilment-consumer.ts', fulfilmentEnv, {
      queueUrl: this.queues.fifoQueueUrl,
      deadLetterQueueUrl: this.queues.fifoDlqUrl,
      fifo: true,
    });
    await this.loadConsumer(
      'loyalty',
      'lambdas/shop/handlers/loyalty-consumer.ts',
      { ...common, CONSUMER_LEDGER: 'inbox' },
      {
        queueUrl: this.queues.standardQueueUrl,
        deadLetterQueueUrl: this.queues.standardDlqUrl,
        fifo: false,
      },
    );
  }

  async stop(): Promise<void> {
    this.stream.close();
    await this.tables.drop();
  }
}
