import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { CUSTOMER_ACCESS_PK_PREFIX } from '../../lambdas/shop/aws/order-table';
import { SHOP_ENV } from '../../lambdas/shop/env-names';
import { ENV, FunctionWithDefaults, grantTableActions } from '@exactly-once/cdk';
import type { OrdersApi } from './orders-api';

export interface EffectsReadApiProps {
  /** The API the read routes join. */
  readonly ordersApi: OrdersApi;
  /** The consumers' effects (ExactlyOnce.effectsTable): each read gets one item. */
  readonly effectsTable: dynamodb.ITable;
  /** Where the customer read finds which caller placed orders for which customer. */
  readonly ordersTable: dynamodb.ITable;
}

/**
 * Read models of the consumers' effects, on the same IAM-authenticated API:
 * GET /customers/{customerId} (points, for the callers who placed orders for
 * the customer: it derives the caller with the API's rule and reads the Orders
 * table's access items) and GET /inventory/{sku} (reserved, shared stock).
 */
export class EffectsReadApi extends Construct {
  readonly getCustomer: FunctionWithDefaults;
  readonly getInventory: FunctionWithDefaults;

  constructor(scope: Construct, id: string, props: EffectsReadApiProps) {
    super(scope, id);
    const environment = { [ENV.effectsTable]: props.effectsTable.tableName };
    this.getCustomer = new FunctionWithDefaults(this, 'GetCustomer', {
      entry: 'lambdas/shop/handlers/get-customer.ts',
      asyncDeadLetterQueue: false,
      environment: {
        ...environment,
        [SHOP_ENV.ordersTable]: props.ordersTable.tableName,
        ...props.ordersApi.callerEnvironment,
      },
    });
    this.getInventory = new FunctionWithDefaults(this, 'GetInventory', {
      entry: 'lambdas/shop/handlers/get-inventory.ts',
      asyncDeadLetterQueue: false,
      environment,
    });
    grantTableActions(this.getCustomer.fn, props.effectsTable, ['GetItem']);
    // Whether the caller placed an order for the customer: a Query of the access items' partitions only,
    // so the read function can see no order (IAM checks the partition key of every item it returns).
    this.getCustomer.fn.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['dynamodb:Query'],
        resources: [props.ordersTable.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${CUSTOMER_ACCESS_PK_PREFIX}*`] } },
      }),
    );
    grantTableActions(this.getInventory.fn, props.effectsTable, ['GetItem']);

    const root = props.ordersApi.api.root;
    props.ordersApi.addGet(root.addResource('customers').addResource('{customerId}'), this.getCustomer, 'customerId');
    props.ordersApi.addGet(root.addResource('inventory').addResource('{sku}'), this.getInventory, 'sku');
  }
}
