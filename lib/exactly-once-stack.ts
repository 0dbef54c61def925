import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { PENDING_OUTBOX_INDEX } from '../lambdas/adapters/order-table';
import { applyCorrectnessAspects } from './aspects';
import type { AppConfig } from './config';
import { EffectsReadApi } from './constructs/effects-read-api';
import { FaultInjectionSwitch } from './constructs/fault-injection';
import { Monitoring } from './constructs/monitoring';
import { OrdersApi } from './constructs/orders-api';
import { OutboxRelay } from './constructs/outbox-relay';
import { Pipelines, REDRIVE_ALLOWANCE } from './constructs/pipelines';
import { IDEMPOTENCY_KEY_EXPIRY, Storage } from './constructs/storage';
import { grantIndexActions, grantTableActions } from './grants';

export interface ExactlyOnceStackProps extends StackProps {
  config: AppConfig;
}

/**
 * The whole system. It only composes: one construct per concern, and the
 * grants where two concerns meet.
 */
export class ExactlyOnceStack extends Stack {
  constructor(scope: Construct, id: string, props: ExactlyOnceStackProps) {
    super(scope, id, props);
    const { config } = props;

    const storage = new Storage(this, 'Storage', { removalPolicy: config.removalPolicy });

    const api = new OrdersApi(this, 'OrdersApi', {
      ordersTableName: storage.ordersTable.tableName,
      idempotencyTableName: storage.idempotencyTable.tableName,
      idempotencyKeyExpiry: IDEMPOTENCY_KEY_EXPIRY,
      rateLimit: config.apiRateLimit,
      burstLimit: config.apiBurstLimit,
    });
    // Transactions need each item action on the table: the order put and the outbox put.
    grantTableActions(api.createOrder.fn, storage.ordersTable, ['PutItem', 'GetItem']);
    grantTableActions(api.createOrder.fn, storage.idempotencyTable, ['PutItem', 'GetItem', 'UpdateItem', 'DeleteItem']);
    grantTableActions(api.cancelOrder.fn, storage.ordersTable, ['GetItem', 'UpdateItem', 'PutItem']);
    grantTableActions(api.getOrder.fn, storage.ordersTable, ['GetItem']);

    const pipelines = new Pipelines(this, 'Pipelines', {
      effectsTableName: storage.effectsTable.tableName,
      providerLogTableName: storage.providerLogTable.tableName,
    });
    for (const { consumer } of [pipelines.fulfilment, pipelines.loyalty]) {
      // Inbox claim (Put) and effects (Update) in one transaction; then the provider call.
      grantTableActions(consumer.fn, storage.effectsTable, ['PutItem', 'UpdateItem']);
      grantTableActions(consumer.fn, storage.providerLogTable, ['UpdateItem']);
    }

    const relay = new OutboxRelay(this, 'OutboxRelay', {
      ordersTable: storage.ordersTable,
      fifoQueueUrl: pipelines.fulfilment.queues.queue.queueUrl,
      standardQueueUrl: pipelines.loyalty.queues.queue.queueUrl,
    });
    for (const publisher of [relay.relay, relay.sweeper]) {
      pipelines.fulfilment.queues.queue.grantSendMessages(publisher.fn);
      pipelines.loyalty.queues.queue.grantSendMessages(publisher.fn);
      grantTableActions(publisher.fn, storage.ordersTable, ['UpdateItem']);
    }
    grantIndexActions(relay.sweeper.fn, storage.ordersTable, PENDING_OUTBOX_INDEX, ['Query']);

    const faultSwitch = new FaultInjectionSwitch(this, 'FaultInjection');
    for (const f of [relay.relay, pipelines.fulfilment.consumer, pipelines.loyalty.consumer]) faultSwitch.attach(f.fn);

    const reads = new EffectsReadApi(this, 'EffectsReadApi', { api, effectsTableName: storage.effectsTable.tableName });
    grantTableActions(reads.getCustomer.fn, storage.effectsTable, ['GetItem']);
    grantTableActions(reads.getInventory.fn, storage.effectsTable, ['GetItem']);

    const functions = {
      'create-order': api.createOrder,
      'cancel-order': api.cancelOrder,
      'get-order': api.getOrder,
      'get-customer': reads.getCustomer,
      'get-inventory': reads.getInventory,
      'outbox-relay': relay.relay,
      'outbox-sweeper': relay.sweeper,
      'fulfilment-consumer': pipelines.fulfilment.consumer,
      'loyalty-consumer': pipelines.loyalty.consumer,
    };
    new Monitoring(this, 'Monitoring', {
      alarmEmail: config.alarmEmail,
      api: api.api,
      pipelines: [pipelines.fulfilment, pipelines.loyalty],
      relay: relay.relay.fn,
      relayFailureQueue: relay.failureQueue,
      otherDeadLetterQueues: relay.sweeper.asyncDeadLetterQueue
        ? [{ name: 'sweeper async DLQ', queue: relay.sweeper.asyncDeadLetterQueue }]
        : [],
      sweepAge: relay.sweepAge,
      functions: Object.entries(functions).map(([name, f]) => ({ name, fn: f.fn })),
    });

    new CfnOutput(this, 'ApiUrl', { value: api.api.url });
    new CfnOutput(this, 'OrdersTableName', { value: storage.ordersTable.tableName });
    new CfnOutput(this, 'IdempotencyTableName', { value: storage.idempotencyTable.tableName });
    new CfnOutput(this, 'EffectsTableName', { value: storage.effectsTable.tableName });
    new CfnOutput(this, 'ProviderLogTableName', { value: storage.providerLogTable.tableName });
    new CfnOutput(this, 'FulfilmentQueueUrl', { value: pipelines.fulfilment.queues.queue.queueUrl });
    new CfnOutput(this, 'FulfilmentDlqUrl', { value: pipelines.fulfilment.queues.deadLetterQueue.queueUrl });
    new CfnOutput(this, 'LoyaltyQueueUrl', { value: pipelines.loyalty.queues.queue.queueUrl });
    new CfnOutput(this, 'LoyaltyDlqUrl', { value: pipelines.loyalty.queues.deadLetterQueue.queueUrl });
    new CfnOutput(this, 'RelayFailureQueueUrl', { value: relay.failureQueue.queueUrl });
    // `npm run dlq` finds every DLQ by these output names.
    if (relay.sweeper.asyncDeadLetterQueue)
      new CfnOutput(this, 'SweeperDlqUrl', { value: relay.sweeper.asyncDeadLetterQueue.queueUrl });
    new CfnOutput(this, 'FaultParameterName', { value: faultSwitch.parameter.parameterName });

    // Synth refuses settings that would break exactly-once (DESIGN 4), however they were made.
    applyCorrectnessAspects(this, { redriveAllowanceSeconds: REDRIVE_ALLOWANCE.toSeconds() });
  }
}
