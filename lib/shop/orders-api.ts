import { Duration } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import type { Construct } from 'constructs';
import { z } from 'zod';
import { placeOrderRequestSchema } from '../../lambdas/shop/domain/order';
import { SHOP_ENV } from '../../lambdas/shop/env-names';
import { ENV, FunctionWithDefaults, grantTableActions, IamRestApi } from '@exactly-once/cdk';

export interface OrdersApiProps {
  /** Orders and their outbox items: the functions may do exactly their item actions on it. */
  readonly ordersTable: dynamodb.ITable;
  /** Powertools' idempotency records of POST /orders (ExactlyOnce.idempotencyTable). */
  readonly idempotencyTable: dynamodb.ITable;
  /**
   * How long a completed POST /orders answer is replayed for its key.
   *
   * @default IDEMPOTENCY_KEY_EXPIRY (24 hours)
   */
  readonly keyExpiry?: Duration;
  /** Steady requests per second (the stage's apiRateLimit). */
  readonly apiRateLimit: number;
  /** Burst requests (the stage's apiBurstLimit). */
  readonly apiBurstLimit: number;
  /** `create`: the stack makes API Gateway's account logging role (IamRestApiProps.createAccountLoggingRole). */
  readonly apiGatewayAccountRole: 'create' | 'existing';
  /** Role-name patterns whose sessions are people (lib/config.ts, packages/runtime/src/api/caller.ts). */
  readonly humanRolePatterns: readonly string[];
}

/** How long a completed command's answer is replayed for its idempotency key. */
export const IDEMPOTENCY_KEY_EXPIRY = Duration.hours(24);

/**
 * The orders API (docs/http-api.md) on the mechanism's IAM REST API: POST /orders (idempotent),
 * GET /orders/{orderId}, POST /orders/{orderId}/cancel.
 */
export class OrdersApi extends IamRestApi {
  readonly createOrder: FunctionWithDefaults;
  readonly cancelOrder: FunctionWithDefaults;
  readonly getOrder: FunctionWithDefaults;
  /** The API's own metrics, graphed on the mechanism's dashboard (ExactlyOnce.addApi). */
  readonly metrics = {
    title: 'Idempotent API: orders placed and replays served',
    metricNames: ['OrderPlaced', 'ReplayServed'],
  } as const;
  /**
   * The caller rule, as every function that derives the caller gets it: the
   * routes other constructs add to this API set it too, so one API has one idea
   * of who a caller is.
   */
  readonly callerEnvironment: Readonly<Record<string, string>>;

  constructor(scope: Construct, id: string, props: OrdersApiProps) {
    super(scope, id, {
      description: 'Exactly-once orders API (idempotent POSTs, IAM auth)',
      rateLimit: props.apiRateLimit,
      burstLimit: props.apiBurstLimit,
      createAccountLoggingRole: props.apiGatewayAccountRole === 'create',
    });

    this.callerEnvironment = { [ENV.humanRolePatterns]: props.humanRolePatterns.join(',') };
    const ordersEnv = { [SHOP_ENV.ordersTable]: props.ordersTable.tableName, ...this.callerEnvironment };
    // API handlers are only ever invoked synchronously: an async DLQ would never receive anything.
    this.createOrder = new FunctionWithDefaults(this, 'CreateOrder', {
      entry: 'lambdas/shop/handlers/create-order.ts',
      asyncDeadLetterQueue: false,
      environment: {
        ...ordersEnv,
        [SHOP_ENV.idempotencyTable]: props.idempotencyTable.tableName,
        [SHOP_ENV.idempotencyKeyExpirySeconds]: String((props.keyExpiry ?? IDEMPOTENCY_KEY_EXPIRY).toSeconds()),
      },
    });
    this.cancelOrder = new FunctionWithDefaults(this, 'CancelOrder', {
      entry: 'lambdas/shop/handlers/cancel-order.ts',
      asyncDeadLetterQueue: false,
      environment: ordersEnv,
    });
    this.getOrder = new FunctionWithDefaults(this, 'GetOrder', {
      entry: 'lambdas/shop/handlers/get-order.ts',
      asyncDeadLetterQueue: false,
      environment: ordersEnv,
    });
    // Transactions need each item action on the table: the order put, the outbox put and the customer access put.
    grantTableActions(this.createOrder.fn, props.ordersTable, ['PutItem', 'GetItem']);
    grantTableActions(this.createOrder.fn, props.idempotencyTable, ['PutItem', 'GetItem', 'UpdateItem', 'DeleteItem']);
    grantTableActions(this.cancelOrder.fn, props.ordersTable, ['GetItem', 'UpdateItem', 'PutItem']);
    grantTableActions(this.getOrder.fn, props.ordersTable, ['GetItem']);

    // Generated from the same schema the handler validates with: one source of truth.
    const orderModel = this.model(
      'PlaceOrderRequest',
      z.toJSONSchema(placeOrderRequestSchema, { target: 'draft-4' }) as apigw.JsonSchema,
    );
    const orders = this.api.root.addResource('orders');
    this.addIdempotentPost(orders, this.createOrder, orderModel);
    const order = orders.addResource('{orderId}');
    this.addGet(order, this.getOrder, 'orderId');
    order.addResource('cancel').addMethod('POST', new apigw.LambdaIntegration(this.cancelOrder.fn), {
      requestValidator: this.validator,
      requestParameters: { 'method.request.path.orderId': true },
    });
  }
}
