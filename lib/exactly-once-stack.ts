import { CfnOutput, Stack, Validations, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import type { AppConfig } from './config';
import { OrdersApi } from './constructs/orders-api';
import { IDEMPOTENCY_KEY_EXPIRY, Storage } from './constructs/storage';
import { grantTableActions } from './grants';

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

    new CfnOutput(this, 'ApiUrl', { value: api.api.url });
    new CfnOutput(this, 'OrdersTableName', { value: storage.ordersTable.tableName });
    new CfnOutput(this, 'IdempotencyTableName', { value: storage.idempotencyTable.tableName });

    Validations.of(this).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'X-Ray tracing (PutTraceSegments/PutTelemetryRecords) does not support resource-level permissions.',
    });
  }
}
