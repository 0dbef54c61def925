import type { Duration } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import type { Construct } from 'constructs';
import { z } from 'zod';
import { placeOrderRequestSchema } from '../../lambdas/shop/domain/order';
import { SHOP_ENV } from '../../lambdas/shop/env-names';
import { FunctionWithDefaults, IamRestApi } from '../exactly-once';

export interface OrdersApiProps {
  ordersTableName: string;
  idempotencyTableName: string;
  idempotencyKeyExpiry: Duration;
  rateLimit: number;
  burstLimit: number;
  /** See IamRestApiProps.createAccountLoggingRole. */
  createAccountLoggingRole: boolean;
  /** Role-name patterns whose sessions are people (lib/shop/config.ts, lambdas/exactly-once/api/caller.ts). */
  humanRolePatterns: readonly string[];
}

/**
 * The orders API (docs/http-api.md) on the mechanism's IAM REST API: POST /orders (idempotent),
 * GET /orders/{orderId}, POST /orders/{orderId}/cancel.
 */
export class OrdersApi extends IamRestApi {
  readonly createOrder: FunctionWithDefaults;
  readonly cancelOrder: FunctionWithDefaults;
  readonly getOrder: FunctionWithDefaults;
  /**
   * The caller rule, as every function that derives the caller gets it: the
   * routes other constructs add to this API set it too, so one API has one idea
   * of who a caller is.
   */
  readonly callerEnvironment: Readonly<Record<string, string>>;

  constructor(scope: Construct, id: string, props: OrdersApiProps) {
    super(scope, id, {
      description: 'Exactly-once orders API (idempotent POSTs, IAM auth)',
      rateLimit: props.rateLimit,
      burstLimit: props.burstLimit,
      createAccountLoggingRole: props.createAccountLoggingRole,
    });

    this.callerEnvironment = { [SHOP_ENV.humanRolePatterns]: props.humanRolePatterns.join(',') };
    const ordersEnv = { [SHOP_ENV.ordersTable]: props.ordersTableName, ...this.callerEnvironment };
    // API handlers are only ever invoked synchronously: an async DLQ would never receive anything.
    this.createOrder = new FunctionWithDefaults(this, 'CreateOrder', {
      entry: 'lambdas/shop/entry-points/create-order.ts',
      asyncDeadLetterQueue: false,
      environment: {
        ...ordersEnv,
        [SHOP_ENV.idempotencyTable]: props.idempotencyTableName,
        [SHOP_ENV.idempotencyKeyExpirySeconds]: String(props.idempotencyKeyExpiry.toSeconds()),
      },
    });
    this.cancelOrder = new FunctionWithDefaults(this, 'CancelOrder', {
      entry: 'lambdas/shop/entry-points/cancel-order.ts',
      asyncDeadLetterQueue: false,
      environment: ordersEnv,
    });
    this.getOrder = new FunctionWithDefaults(this, 'GetOrder', {
      entry: 'lambdas/shop/entry-points/get-order.ts',
      asyncDeadLetterQueue: false,
      environment: ordersEnv,
    });

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
